package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestServer proves the harness: a fresh database, the password role, and
// a wrong password refused.
func TestServer(t *testing.T) {
	ctx := context.Background()
	url := RequireDB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var who string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&who); err != nil {
		t.Fatal(err)
	}
	if who != User {
		t.Fatalf("connected as %q, want %q", who, User)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE x (id int primary key)"); err != nil {
		t.Fatal(err)
	}
	bad, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	bad.Password = "wrong"
	if c, err := pgx.ConnectConfig(ctx, bad); err == nil {
		c.Close(ctx)
		t.Fatal("a wrong password was accepted")
	}
}

// TestStopRemovesDir proves that Stop stops the server and removes its
// directory.
func TestStopRemovesDir(t *testing.T) {
	Require(t) // skips without binaries
	s, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := s.Dir()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there after Stop (%v)", dir, err)
	}
}

// Dir is the server's directory, which holds its Unix socket.
func (s *Server) Dir() string { return s.dir }
