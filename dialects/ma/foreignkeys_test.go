package ma_test

import (
	"context"
	"testing"

	"github.com/littlebitlabs/minimal/dialects"
)

// TestForeignKeys: Tables names the column a single-column foreign key
// references, as PostgreSQL's introspection does; a composite key and a key
// into another database are not shown, and of two keys on one column the
// first by name is.
func TestForeignKeys(t *testing.T) {
	db := newTestDB(t)
	other := "minimal_" + db.n("other") // the test login may create minimal_* databases
	db.exec(t, "CREATE DATABASE `"+other+"`")
	t.Cleanup(func() { _, _ = db.admin.Exec("DROP DATABASE IF EXISTS `" + other + "`") })
	db.exec(t, "CREATE TABLE `"+other+"`.far (id int PRIMARY KEY) ENGINE=InnoDB")
	for _, q := range []string{
		`CREATE TABLE {parent} (id int PRIMARY KEY, code varchar(10) NOT NULL UNIQUE, a int, b int, UNIQUE (a, b)) ENGINE=InnoDB`,
		`CREATE TABLE {other_parent} (id int PRIMARY KEY) ENGINE=InnoDB`,
		`CREATE TABLE {child} (
			id int PRIMARY KEY,
			parent_id int,
			parent_code varchar(10),
			a int, b int,
			two int,
			far_id int,
			self_id int,
			CONSTRAINT {fk_parent} FOREIGN KEY (parent_id) REFERENCES {parent} (id),
			CONSTRAINT {fk_code} FOREIGN KEY (parent_code) REFERENCES {parent} (code),
			CONSTRAINT {fk_pair} FOREIGN KEY (a, b) REFERENCES {parent} (a, b),
			CONSTRAINT {fk_z_two} FOREIGN KEY (two) REFERENCES {parent} (id),
			CONSTRAINT {fk_a_two} FOREIGN KEY (two) REFERENCES {other_parent} (id),
			CONSTRAINT {fk_far} FOREIGN KEY (far_id) REFERENCES ` + "`" + other + "`" + `.far (id),
			CONSTRAINT {fk_self} FOREIGN KEY (self_id) REFERENCES {child} (id)
		) ENGINE=InnoDB`,
	} {
		db.exec(t, q)
	}
	src := db.open(t, dialects.Config{})
	tables, err := src.Tables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var child *dialects.Table
	for i := range tables {
		if tables[i].Name == db.n("child") {
			child = &tables[i]
		}
	}
	if child == nil {
		t.Fatal("child not introspected")
	}
	want := map[string][2]string{
		"id":          {},
		"parent_id":   {db.n("parent"), "id"},
		"parent_code": {db.n("parent"), "code"},
		"a":           {}, // composite
		"b":           {},
		"two":         {db.n("other_parent"), "id"}, // fk_a_two before fk_z_two
		"far_id":      {},                           // another database
		"self_id":     {db.n("child"), "id"},
	}
	if len(child.Columns) != len(want) {
		t.Fatalf("columns %+v", child.Columns)
	}
	for _, c := range child.Columns {
		if got := [2]string{c.RefTable, c.RefColumn}; got != want[c.Name] {
			t.Errorf("%s references %q, want %q", c.Name, got, want[c.Name])
		}
	}
}
