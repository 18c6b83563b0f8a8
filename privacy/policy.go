// Package privacy owns an org's payload policy (table org_privacy): what
// expd keeps of the prompt and response of a model call (store, redact,
// hash or drop), the org's custom redaction patterns and its retention
// shorter than the plan's (docs/privacy.md). Ingest applies the policy in
// force for each event (Payload.Apply) before anything is written.
package privacy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"

	"github.com/expd/expd/redaction"
	"github.com/expd/expd/vocab"
)

// Policy is what is kept of a model call's prompt and response.
type Policy string

// The policies, from the loosest to the strictest.
const (
	PolicyStore  Policy = "store"  // the text as sent (the v1 contract's default)
	PolicyRedact Policy = "redact" // detected personal data replaced by typed placeholders
	PolicyHash   Policy = "hash"   // a keyed hash only: identical texts group, none can be read
	PolicyDrop   Policy = "drop"   // nothing
)

// Policies lists every policy, loosest first: a later one is stricter.
var Policies = []Policy{PolicyStore, PolicyRedact, PolicyHash, PolicyDrop}

// rank orders policies by strictness; an unknown policy has none.
func (p Policy) rank() int {
	for i, q := range Policies {
		if p == q {
			return i
		}
	}
	return -1
}

// Valid tells whether p is one of Policies.
func (p Policy) Valid() bool { return p.rank() >= 0 }

// Stricter returns the stricter of p and q; an empty q leaves p.
func (p Policy) Stricter(q Policy) Policy {
	if q.rank() > p.rank() {
		return q
	}
	return p
}

// KeepsText tells whether a reader (an LLM judge) can read what p stores.
func (p Policy) KeepsText() bool { return p == PolicyStore || p == PolicyRedact || p == "" }

// HashPrefix marks a hashed text: "hmac-sha256:" and 64 hex digits.
const HashPrefix = "hmac-sha256:"

// Payload applies an org's policy (and an experiment's stricter one) to
// model calls. Built by Load; safe for concurrent use. A nil *Payload
// stores texts as sent.
type Payload struct {
	Policy   Policy
	redactor *redaction.Redactor
	hashKey  []byte // the org's hash key; nil when none is needed or configured
}

// Effective is the policy applied to an event of an experiment whose
// config asks for experiment (empty: none).
func (p *Payload) Effective(experiment Policy) Policy {
	org := PolicyStore
	if p != nil {
		org = p.Policy
	}
	return org.Stricter(experiment)
}

// Apply rewrites the texts of mc under the policy in force for an
// experiment asking for experiment: the prompt and response as the policy
// says, the error message redacted under any policy but store (it stays:
// the error metric counts calls whose error is set, and teams need the
// diagnostic). It replaces the pointers, never the strings they point to
// (the decoded event may share them).
func (p *Payload) Apply(experiment Policy, mc *vocab.ModelCall) {
	pol := p.Effective(experiment)
	if pol == PolicyStore {
		return
	}
	for _, t := range []**string{&mc.Prompt, &mc.Response} {
		if *t != nil {
			*t = p.text(pol, **t)
		}
	}
	if mc.Error != nil {
		mc.Error = p.text(PolicyRedact, *mc.Error)
	}
}

// Comment is a score's comment (free text a reviewer or judge wrote about
// a call, which may quote it) as the org's policy keeps it: as sent,
// redacted, or nothing under hash and drop (a hash of a comment groups
// nothing useful).
func (p *Payload) Comment(c *string) *string {
	pol := p.Effective("")
	if c == nil || pol == PolicyStore {
		return c
	}
	if pol == PolicyRedact {
		return p.text(PolicyRedact, *c)
	}
	return nil
}

// text is s as pol keeps it (nil: nothing). Without a hash key (the
// server lost EXPD_SECRETS_KEY after the policy was set) hash stores
// nothing: never the text.
func (p *Payload) text(pol Policy, s string) *string {
	var out string
	switch pol {
	case PolicyRedact:
		var r *redaction.Redactor
		if p != nil {
			r = p.redactor
		}
		out = r.Redact(s)
	case PolicyHash:
		if p == nil || p.hashKey == nil {
			return nil
		}
		out = HashText(p.hashKey, s)
	default: // PolicyDrop, and anything unknown: the strictest
		return nil
	}
	return &out
}

// HashText is the stored form of s under the hash policy with key.
func HashText(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return HashPrefix + hex.EncodeToString(m.Sum(nil))
}
