// Package ratelimit holds per-org token buckets for the SDK routes
// (/v1/assign, /v1/events). Each org's bucket is sized by its plan
// (plans.Limit RequestsPerSecond and Burst) unless an override says
// otherwise. By default buckets live in the memory of one API instance:
// with n instances behind a load balancer an org can reach about n times
// its rate, which docs/assignment.md explains. With REDIS_URL (OpenRedis)
// they live in Redis and the limit holds across instances.
package ratelimit
