package fakellm

import (
	"net/http/httptest"
	"testing"
)

// Server is a fake running for a test.
type Server struct {
	*httptest.Server
	*Handler
}

// New starts a fake accepting key ("" accepts any); it stops with the test.
func New(t testing.TB, key string) *Server {
	s := &Server{Handler: NewHandler(key)}
	s.Server = httptest.NewServer(s.Handler)
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the endpoint's base_url (…/v1), what OpenAI clients take.
func (s *Server) BaseURL() string { return s.URL + "/v1" }
