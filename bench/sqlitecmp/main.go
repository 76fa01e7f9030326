// Command sqlitecmp measures the alternative to memdir's mapped recall index
// that the design considered: the same data (a row per file with its stamp,
// a row per posting) in SQLite through modernc.org/sqlite, as a new process
// would open and query it. Run: go run ./bench/sqlitecmp -n 20000. It prints
// the CPU time of opening the database, reading every file's stamp (what a
// refresh needs) and reading the postings of 12 frequent terms (what a query
// needs). See docs/performance.md.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"
)

func main() {
	n := flag.Int("n", 20000, "files")
	query := flag.Bool("query", false, "(internal) run the measured queries on an existing database")
	dbPath := flag.String("db", filepath.Join(os.TempDir(), "memdir-sqlitecmp.db"), "database")
	flag.Parse()
	if !*query {
		os.Remove(*dbPath)
		db, err := sql.Open("sqlite", *dbPath)
		check(err)
		_, err = db.Exec(`create table files(path text primary key, size int, mtime int, ctime int, ino int, name text, description text, hash blob);
create table postings(term text, doc int, tf int, primary key(term, doc)) without rowid;`)
		check(err)
		tx, _ := db.Begin()
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < *n; i++ {
			tx.Exec(`insert into files values(?,?,?,?,?,?,?,?)`, fmt.Sprintf("project_mem_%06d.md", i), 700, i, i, i, fmt.Sprintf("name-%d", i), "a description of a typical length for a memory, about a hundred characters long", make([]byte, 32))
			for range 60 {
				tx.Exec(`insert or ignore into postings values(?,?,1)`, fmt.Sprintf("t%d", int(rng.ExpFloat64()*300)), i)
			}
		}
		check(tx.Commit())
		db.Close()
		fmt.Printf("built %s with %d files\n", *dbPath, *n)
		return
	}
	c0 := cpu()
	db, err := sql.Open("sqlite", *dbPath)
	check(err)
	check(db.Ping())
	c1 := cpu()
	rows, err := db.Query(`select path, size, mtime, ctime, ino from files`)
	check(err)
	k := 0
	for rows.Next() {
		var p string
		var a, b, c, d int64
		rows.Scan(&p, &a, &b, &c, &d)
		k++
	}
	c2 := cpu()
	m := 0
	for t := range 12 {
		rows, err := db.Query(`select doc, tf from postings where term = ?`, fmt.Sprintf("t%d", t*3))
		check(err)
		for rows.Next() {
			var d, f int
			rows.Scan(&d, &f)
			m++
		}
	}
	c3 := cpu()
	fmt.Printf("open %v, %d stamps %v, %d postings of 12 terms %v (CPU)\n", c1-c0, k, c2-c1, m, c3-c2)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
