package orgs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// clerkEvent is the envelope of an identity-provider (Clerk) webhook:
// {"type":"user.created","object":"event","timestamp":<ms>,"data":{...}}.
type clerkEvent struct {
	Type      string          `json:"type"`
	Timestamp int64           `json:"timestamp"` // when the event happened, Unix ms
	Data      json.RawMessage `json:"data"`
}

type clerkUser struct {
	ID                    string `json:"id"`
	FirstName             string `json:"first_name"`
	LastName              string `json:"last_name"`
	PrimaryEmailAddressID string `json:"primary_email_address_id"`
	EmailAddresses        []struct {
		ID           string `json:"id"`
		EmailAddress string `json:"email_address"`
	} `json:"email_addresses"`
	UpdatedAt int64 `json:"updated_at"`
}

type clerkOrg struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	UpdatedAt int64  `json:"updated_at"`
}

type clerkMembership struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	UpdatedAt    int64  `json:"updated_at"`
	Organization struct {
		ID string `json:"id"`
	} `json:"organization"`
	PublicUserData struct {
		UserID string `json:"user_id"`
	} `json:"public_user_data"`
}

// ParseClerkEvent reads an identity-provider webhook body. handled is
// false for event types expd does not store (sessions, emails, ...).
// A change's time is the object's updated_at, or for a delete (whose data
// is only {"id","deleted":true} for users and orgs) the event's timestamp.
func ParseClerkEvent(payload []byte) (ch IdentityChange, handled bool, err error) {
	var ev clerkEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return ch, false, fmt.Errorf("identity event: %w", err)
	}
	kind, action, _ := strings.Cut(ev.Type, ".")
	switch action {
	case "created", "updated":
	case "deleted":
		ch.Deleted = true
	default:
		return ch, false, nil
	}
	var updatedAt int64
	switch kind {
	case "user":
		var u clerkUser
		err = json.Unmarshal(ev.Data, &u)
		ch.User, updatedAt = &UserData{ClerkUserID: u.ID, Email: u.primaryEmail(), FirstName: u.FirstName, LastName: u.LastName}, u.UpdatedAt
	case "organization":
		var o clerkOrg
		err = json.Unmarshal(ev.Data, &o)
		ch.Org, updatedAt = &OrgData{ClerkOrgID: o.ID, Name: o.Name, Slug: o.Slug}, o.UpdatedAt
	case "organizationMembership":
		var m clerkMembership
		err = json.Unmarshal(ev.Data, &m)
		ch.Membership = &MembershipData{ClerkMembershipID: m.ID, ClerkOrgID: m.Organization.ID, ClerkUserID: m.PublicUserData.UserID, Role: m.Role}
		updatedAt = m.UpdatedAt
	default:
		return ch, false, nil
	}
	if err != nil {
		return ch, false, fmt.Errorf("identity event %s: %w", ev.Type, err)
	}
	ch.At = updatedAt
	if ch.Deleted || ch.At == 0 {
		ch.At = ev.Timestamp
	}
	if ch.At <= 0 {
		return ch, false, errors.New("identity event has neither updated_at nor timestamp")
	}
	return ch, true, ch.validate()
}

func (ch IdentityChange) validate() error {
	switch {
	case ch.User != nil && ch.User.ClerkUserID == "",
		ch.Org != nil && ch.Org.ClerkOrgID == "":
		return fmt.Errorf("%w: data has no id", ErrIncompleteChange)
	case ch.Membership != nil && !ch.Deleted && (ch.Membership.ClerkOrgID == "" || ch.Membership.ClerkUserID == ""):
		return fmt.Errorf("%w: membership names no organization.id or public_user_data.user_id", ErrIncompleteChange)
	case ch.Membership != nil && ch.Membership.ClerkMembershipID == "" && (ch.Membership.ClerkOrgID == "" || ch.Membership.ClerkUserID == ""):
		return fmt.Errorf("%w: membership has neither an id nor its org and user", ErrIncompleteChange)
	}
	return ch.validateText()
}

// validateText refuses what no database can store or no id can hold: a
// NUL anywhere (PostgreSQL text cannot hold it, so the change would fail
// in its workflow forever), and any control character in an id.
func (ch IdentityChange) validateText() error {
	var ids, texts map[string]string
	switch {
	case ch.User != nil:
		ids = map[string]string{"id": ch.User.ClerkUserID}
		texts = map[string]string{"email_addresses.email_address": ch.User.Email, "first_name": ch.User.FirstName, "last_name": ch.User.LastName}
	case ch.Org != nil:
		ids = map[string]string{"id": ch.Org.ClerkOrgID}
		texts = map[string]string{"name": ch.Org.Name, "slug": ch.Org.Slug}
	case ch.Membership != nil:
		ids = map[string]string{"id": ch.Membership.ClerkMembershipID, "organization.id": ch.Membership.ClerkOrgID, "public_user_data.user_id": ch.Membership.ClerkUserID}
		texts = map[string]string{"role": ch.Membership.Role}
	}
	for field, v := range ids {
		if strings.IndexFunc(v, isControl) >= 0 {
			return fmt.Errorf("%w: data.%s holds a control character", ErrIncompleteChange, field)
		}
	}
	for field, v := range texts {
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("%w: data.%s holds a NUL character", ErrIncompleteChange, field)
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func (u clerkUser) primaryEmail() string {
	for _, e := range u.EmailAddresses {
		if e.ID == u.PrimaryEmailAddressID {
			return e.EmailAddress
		}
	}
	if len(u.EmailAddresses) > 0 {
		return u.EmailAddresses[0].EmailAddress
	}
	return ""
}
