// Package auth verifies the two kinds of credential expd accepts: session
// JWTs issued by the identity provider (RS256, from a PEM key or a JWKS) and
// per-org API keys (pk_/sk_ prefixed, 32 random bytes, stored as SHA-256).
// It knows nothing of HTTP or the database.
package auth
