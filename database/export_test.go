package database

import "gorm.io/gorm"

// Apply runs the given migrations as Migrate runs the embedded ones.
func Apply(db *gorm.DB, migs []Migration) ([]int, error) { return apply(db, migs) }

// NewMigration builds a migration as Migrations does from a file.
var NewMigration = newMigration
