package billing

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
)

// CheckReturnURL accepts an absolute URL whose origin is one of the
// configured return origins, so checkout and portal can only send the
// browser back to the dashboard (no open redirect through expd).
func (c *Client) CheckReturnURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.User != nil {
		return errors.New("must be an absolute http(s) URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return errors.New("must be an absolute http(s) URL")
	}
	var origins []string
	if c != nil {
		origins = c.cfg.ReturnOrigins
	}
	if len(origins) == 0 {
		return errors.New("no return origins are configured (set EXPD_DASHBOARD_ORIGINS)")
	}
	if !slices.Contains(origins, u.Scheme+"://"+u.Host) {
		return fmt.Errorf("origin %s://%s is not an allowed dashboard origin", u.Scheme, u.Host)
	}
	return nil
}
