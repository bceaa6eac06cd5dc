package sqlite

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOpen opens and closes a digest database of 10 MB and of 1 GB,
// as every digest command does: what the checks before the first write
// cost. "closed" is a database its last process closed; "killed" one
// whose last process left its -wal behind, which Open reads whole before
// anything writes to it. The file is in the page cache (it was just
// written, and synced), as a database used every day is.
//
//	go test ./internal/store/sqlite -run '^$' -bench BenchmarkOpen -benchtime 20x
func BenchmarkOpen(b *testing.B) {
	for _, mb := range []int{10, 1024} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "digest.db")
			fillTo(b, path, int64(mb)<<20)
			info, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			for _, killed := range []bool{false, true} {
				b.Run(map[bool]string{false: "closed", true: "killed"}[killed], func(b *testing.B) {
					ctx := context.Background()
					for b.Loop() {
						if killed {
							b.StopTimer()
							if err := os.WriteFile(path+"-wal", nil, 0o600); err != nil {
								b.Fatal(err)
							}
							b.StartTimer()
						}
						s, err := Open(ctx, path)
						if err != nil {
							b.Fatal(err)
						}
						if err := s.Close(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(info.Size())/(1<<20), "MB")
				})
			}
		})
	}
}

// fillTo makes a digest database at path of about size bytes: payloads of
// random (incompressible) bytes, a 4 KB page each, written in transactions
// of 4 MB, then closed, so that no -wal is left beside it.
func fillTo(b *testing.B, path string, size int64) {
	b.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	db := s.SQL()
	body := make([]byte, 3900)
	for n := int64(0); n < size; {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.Prepare(`INSERT INTO payloads(hash, gz) VALUES (?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		for range 1024 {
			rand.Read(body)
			if _, err := stmt.Exec(fmt.Sprintf("%x", body[:32]), body); err != nil {
				b.Fatal(err)
			}
			n += 4096
		}
		stmt.Close()
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		b.Fatalf("%s-wal is left after closing", path)
	}
	// On the disk too: an fsync in the first opens would otherwise wait
	// for the writing of the whole file.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}
