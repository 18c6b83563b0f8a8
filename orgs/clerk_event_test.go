package orgs_test

import (
	"errors"
	"testing"

	"github.com/expd/expd/internal/testenv"
	"github.com/expd/expd/orgs"
)

func TestParseClerkEvent(t *testing.T) {
	user := `{"type":"user.updated","object":"event","timestamp":9000,"data":{"id":"user_1","first_name":"Ada","last_name":"L",
		"primary_email_address_id":"idn_2","updated_at":5000,
		"email_addresses":[{"id":"idn_1","email_address":"other@example.com"},{"id":"idn_2","email_address":"primary@example.com"}]}}`
	ch, handled, err := orgs.ParseClerkEvent([]byte(user))
	if err != nil || !handled || ch.Deleted || ch.At != 5000 || ch.User == nil ||
		*ch.User != (orgs.UserData{ClerkUserID: "user_1", Email: "primary@example.com", FirstName: "Ada", LastName: "L"}) {
		t.Fatalf("user event: %+v %+v, %v, %v", ch, ch.User, handled, err)
	}

	// Deletes carry no updated_at: the event's timestamp orders them.
	ch, handled, err = orgs.ParseClerkEvent([]byte(`{"type":"organization.deleted","timestamp":7000,"data":{"id":"org_1","object":"organization","deleted":true}}`))
	if err != nil || !handled || !ch.Deleted || ch.At != 7000 || ch.Org.ClerkOrgID != "org_1" {
		t.Fatalf("org delete: %+v, %v", ch, err)
	}

	ch, _, err = orgs.ParseClerkEvent([]byte(`{"type":"organizationMembership.created","timestamp":1,"data":{"id":"orgmem_1","role":"org:admin","updated_at":3000,
		"organization":{"id":"org_1"},"public_user_data":{"user_id":"user_1"}}}`))
	if err != nil || *ch.Membership != (orgs.MembershipData{ClerkMembershipID: "orgmem_1", ClerkOrgID: "org_1", ClerkUserID: "user_1", Role: "org:admin"}) || ch.At != 3000 {
		t.Fatalf("membership: %+v, %v", ch, err)
	}

	for _, ignored := range []string{`{"type":"session.created","data":{}}`, `{"type":"user.banned","data":{}}`, `{"type":"email.created","data":{}}`} {
		if _, handled, err := orgs.ParseClerkEvent([]byte(ignored)); handled || err != nil {
			t.Errorf("%s: handled %v, err %v", ignored, handled, err)
		}
	}
	for _, broken := range []string{
		`not json`,
		`{"type":"user.created","timestamp":1,"data":{"first_name":"no id"}}`,
		`{"type":"user.created","data":{"id":"user_1"}}`, // no time at all
		`{"type":"organizationMembership.updated","timestamp":1,"data":{"id":"orgmem_1"}}`,
		`{"type":"user.created","timestamp":1,"data":{"id":7}}`,
	} {
		if _, _, err := orgs.ParseClerkEvent([]byte(broken)); err == nil {
			t.Errorf("%s: accepted", broken)
		}
	}
}

func TestMembershipDeleteNamingOnlyItsID(t *testing.T) {
	db := testenv.DB(t)
	m := orgs.MembershipData{ClerkMembershipID: "orgmem_only", ClerkOrgID: "org_only", ClerkUserID: "user_only", Role: "org:member"}
	applied, err := orgs.UpsertMembership(ctx, db, m, 1000)
	mustApply(t, true, applied, err)
	applied, err = orgs.ApplyIdentityChange(ctx, db, orgs.IdentityChange{Deleted: true, At: 2000, Membership: &orgs.MembershipData{ClerkMembershipID: "orgmem_only"}})
	mustApply(t, true, applied, err)
	if got := membership(t, db, org(t, db, "org_only"), user(t, db, "user_only")); got.DeletedAt == nil {
		t.Fatal("membership named by id only was not deleted")
	}
	applied, err = orgs.ApplyIdentityChange(ctx, db, orgs.IdentityChange{Deleted: true, At: 2000, Membership: &orgs.MembershipData{ClerkMembershipID: "orgmem_never_seen"}})
	mustApply(t, false, applied, err)
	if _, err := orgs.ApplyIdentityChange(ctx, db, orgs.IdentityChange{At: 1}); !errors.Is(err, orgs.ErrIncompleteChange) {
		t.Fatalf("empty change: %v", err)
	}
}
