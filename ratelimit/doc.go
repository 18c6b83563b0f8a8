// Package ratelimit holds per-org token buckets for the SDK routes
// (/v1/assign, /v1/events). Each org's bucket is sized by its plan
// (plans.Limit RequestsPerSecond and Burst) unless an override says
// otherwise. Buckets live in the memory of one API instance: with n
// instances behind a load balancer an org can reach about n times its
// rate, which docs/assignment.md explains.
package ratelimit
