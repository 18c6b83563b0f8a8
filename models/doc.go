// Package models holds the relational schema of expd: the GORM models, the
// versioned SQL migrations that create them on PostgreSQL and SQLite, and the
// function that opens a database for either.
//
// Every row that belongs to an org carries org_id, and every query made
// through these models is scoped by it. Internal ids are UUIDs; references
// to the identity provider live in clerk_-prefixed columns.
package models
