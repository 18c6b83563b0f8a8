package auth

import (
	"errors"
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// AdminRole is the identity provider's org role for administrators.
const AdminRole = "org:admin"

// Session is who a verified identity JWT speaks for.
type Session struct {
	UserID  string // identity provider's user id (sub)
	OrgID   string // identity provider's org id
	OrgSlug string
	Role    string // e.g. "org:admin", "org:member"
}

// IsAdmin tells whether the session holds the org admin role.
func (s Session) IsAdmin() bool { return s.Role == AdminRole }

// sessionClaims reads both shapes of the identity provider's session token:
// v1 (org_id, org_role, org_slug at the top) and v2 (an "o" object with
// id, rol, slg, where the role has no "org:" prefix).
type sessionClaims struct {
	jwt.RegisteredClaims
	OrgID   string `json:"org_id,omitempty"`
	OrgRole string `json:"org_role,omitempty"`
	OrgSlug string `json:"org_slug,omitempty"`
	AZP     string `json:"azp,omitempty"` // origin that obtained the token
	O       *struct {
		ID   string `json:"id"`
		Role string `json:"rol"`
		Slug string `json:"slg"`
	} `json:"o,omitempty"`
}

// ErrNoOrg is returned for a valid token that names no active org: every
// dashboard route is org-scoped.
var ErrNoOrg = errors.New("token has no active organization")

func (c *sessionClaims) session() (Session, error) {
	s := Session{UserID: c.Subject, OrgID: c.OrgID, Role: c.OrgRole, OrgSlug: c.OrgSlug}
	if c.O != nil && c.O.ID != "" {
		s.OrgID, s.OrgSlug, s.Role = c.O.ID, c.O.Slug, c.O.Role
		if s.Role != "" && !strings.HasPrefix(s.Role, "org:") {
			s.Role = "org:" + s.Role
		}
	}
	if s.UserID == "" {
		return Session{}, fmt.Errorf("token has no subject")
	}
	if s.OrgID == "" {
		return Session{}, ErrNoOrg
	}
	return s, nil
}
