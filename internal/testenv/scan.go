package testenv

import (
	"fmt"
	"testing"

	"gorm.io/gorm"
)

// ColumnsContaining lists every "table.column" of the database whose text
// (any column, cast to text) contains needle in some row: the scan that
// proves a secret or a personal datum is stored nowhere in clear.
func ColumnsContaining(t testing.TB, db *gorm.DB, needle string) []string {
	t.Helper()
	type col struct{ Table, Column string }
	var cols []col
	var contains string
	switch db.Dialector.Name() {
	case "postgres":
		err := db.Raw(`SELECT c.table_name AS "table", c.column_name AS "column" FROM information_schema.columns c
			JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
			WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY 1, 2`).Scan(&cols).Error
		if err != nil {
			t.Fatalf("list columns: %v", err)
		}
		contains = "strpos(CAST(%s AS TEXT), ?) > 0"
	case "sqlite":
		err := db.Raw(`SELECT m.name AS "table", p.name AS "column" FROM sqlite_master m, pragma_table_info(m.name) p
			WHERE m.type = 'table' ORDER BY 1, 2`).Scan(&cols).Error
		if err != nil {
			t.Fatalf("list columns: %v", err)
		}
		contains = "instr(CAST(%s AS TEXT), ?) > 0"
	default:
		t.Fatalf("scan: unknown dialect %s", db.Dialector.Name())
	}
	if len(cols) == 0 {
		t.Fatal("scan: no columns found")
	}
	var hits []string
	for _, c := range cols {
		var n int64
		q := db.Table(c.Table).Where(fmt.Sprintf(contains, `"`+c.Column+`"`), needle)
		if err := q.Count(&n).Error; err != nil {
			t.Fatalf("scan %s.%s: %v", c.Table, c.Column, err)
		}
		if n > 0 {
			hits = append(hits, c.Table+"."+c.Column)
		}
	}
	return hits
}
