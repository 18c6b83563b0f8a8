package orgs

import "time"

// Plan names an org's subscription tier. The limits of each plan live in
// package plans; this is only the stored name.
type Plan string

// Org is a tenant. ConfigVersion is raised by every experiment create or
// update of the org; clients use it as their config's staleness hint.
type Org struct {
	ID                   string     `gorm:"primaryKey;type:uuid" json:"id"`
	ClerkOrgID           *string    `gorm:"column:clerk_org_id" json:"clerk_org_id,omitempty"`
	Name                 string     `json:"name"`
	Slug                 string     `json:"slug"`
	Plan                 Plan       `json:"plan"`
	ConfigVersion        int64      `json:"config_version"`
	StripeCustomerID     *string    `json:"-"`
	StripeSubscriptionID *string    `json:"-"`
	SubscriptionStatus   string     `json:"subscription_status"`
	PlanEventAt          *time.Time `json:"-"`
	DeletedAt            *time.Time `json:"-"`
	CreatedAt            time.Time  `json:"created_at"`
	UpdatedAt            time.Time  `json:"updated_at"`
}

// User is a person known through the identity provider.
type User struct {
	ID          string `gorm:"primaryKey;type:uuid"`
	ClerkUserID string `gorm:"column:clerk_user_id"`
	Email       string
	FirstName   string
	LastName    string
	DeletedAt   *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Membership ties a user to an org with a role such as "org:admin".
type Membership struct {
	ID                string  `gorm:"primaryKey;type:uuid"`
	OrgID             string  `gorm:"type:uuid"`
	UserID            string  `gorm:"type:uuid"`
	ClerkMembershipID *string `gorm:"column:clerk_membership_id"`
	Role              string
	DeletedAt         *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}
