package pgtest

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/addrclean/addrclean/internal/needs"
)

// ErrNoBinaries is returned by Start when initdb, pg_ctl or postgres cannot be
// found.
var ErrNoBinaries = errors.New("the PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH " +
	"or in /usr/lib/postgresql/*/bin; install them with 'apt-get install postgresql' (Debian/Ubuntu)")

// Password is the password of the role User, which logs in with
// scram-sha-256; the superuser "postgres" is trusted without one.
const (
	User     = "app"
	Password = "pgtest-secret-Zq7"
)

// Server is a running test server.
type Server struct {
	dir    string // the server's directory: data, socket and log
	port   int
	stdin  *os.File // closing it stops the supervisor, which stops the server
	cmd    *exec.Cmd
	dbs    atomic.Int64
	stopMu sync.Mutex
	done   bool
}

// binDir finds the directory holding initdb, pg_ctl and postgres.
func binDir() (string, error) {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
		if r, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(r))
		}
	}
	vers, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// The newest version first: sort by the numeric version.
	slices.SortFunc(vers, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	dirs = append(dirs, vers...)
	for _, d := range dirs {
		ok := true
		for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
			if st, err := os.Stat(filepath.Join(d, b)); err != nil || st.IsDir() {
				ok = false
				break
			}
		}
		if ok {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

// runAs is who runs the server: initdb and postgres refuse to run as root,
// so root hands them to the "postgres" user (or "nobody").
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
		}
	}
	return nil, errors.New("running as root, and no unprivileged user (postgres, nobody) to run the server as")
}

// supervisor starts the server, says "ready", and stops it and removes its
// directory once its standard input closes (the test process ended).
const supervisor = `
bin=$1 dir=$2 port=$3
"$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -s -t 60 -o "-p $port -k $dir -c listen_addresses=" start || exit 1
echo ready
exec 1>>"$dir/log" 2>&1
cat >/dev/null
"$bin/pg_ctl" -D "$dir/data" -m immediate -s stop
rm -rf "$dir"
`

// Start initialises and starts a server. The caller must Stop it.
func Start(ctx context.Context) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	attr := &syscall.SysProcAttr{Credential: cred, Setpgid: true}

	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"),
		"-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "-N", "--no-instructions")
	initdb.SysProcAttr = attr
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	// A throwaway server: durability off, few resources.
	conf := "\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n" +
		"max_connections = 60\nlog_min_messages = warning\ntimezone = 'UTC'\n"
	if err := appendFile(filepath.Join(dir, "data", "postgresql.conf"), conf); err != nil {
		return fail(err)
	}
	hba := "local all postgres trust\nlocal all all scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(dir, "data", "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		if err := os.Chown(filepath.Join(dir, "data", "pg_hba.conf"), int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}

	// The port only names the socket file: the server listens on no TCP
	// port, and the directory is ours alone.
	const port = 5432
	r, w, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command("/bin/sh", "-c", supervisor, "sh", bin, dir, strconv.Itoa(port))
	cmd.SysProcAttr = attr
	cmd.Dir = dir
	cmd.Stdin = r
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.Close()
		w.Close()
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fail(err)
	}
	r.Close()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		w.Close()
		_ = cmd.Wait()
		logText, _ := os.ReadFile(filepath.Join(dir, "log"))
		return fail(fmt.Errorf("starting postgres failed:\n%s", logText))
	}
	s := &Server{dir: dir, port: port, stdin: w, cmd: cmd}
	if err := s.setup(ctx); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// setup creates the role User.
func (s *Server) setup(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres", "postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	verifier, err := scramVerifier(Password, scramIterations)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", User, verifier))
	return err
}

// scramIterations is the PBKDF2 iteration count of User's password. The
// server's default, 4096, is what a real password needs; here it made every
// login of the tests (hundreds per package, under -race) spend milliseconds
// of CPU on both sides. The login is still a full scram-sha-256 exchange.
const scramIterations = 16

// scramVerifier is the SCRAM-SHA-256 verifier PostgreSQL stores for
// password (RFC 5802, RFC 7677): a password given in this form is stored as
// it is, with its iteration count (PostgreSQL 15 has no scram_iterations
// setting).
func scramVerifier(password string, iterations int) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	hmacOf := func(key []byte, msg string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	stored := sha256.Sum256(hmacOf(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(hmacOf(salted, "Server Key"))), nil
}

// URL is a connection URL for database db as user (the superuser "postgres"
// needs no password; User's is added).
func (s *Server) URL(user, db string) string {
	userinfo := user
	if user == User {
		userinfo = user + ":" + Password
	}
	return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", userinfo, db, s.dir, s.port)
}

// NewDB creates a fresh database owned by User and returns its name.
func (s *Server) NewDB(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d", s.dbs.Add(1))
	conn, err := pgx.Connect(ctx, s.URL("postgres", "postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" OWNER "+User); err != nil {
		return "", err
	}
	return name, nil
}

// Stop stops the server and removes its directory.
func (s *Server) Stop() error {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	s.stdin.Close()
	err := s.cmd.Wait()
	if err != nil {
		return fmt.Errorf("stopping postgres: %w", err)
	}
	return nil
}

var (
	shared    *Server
	sharedErr error
	once      sync.Once
)

// Shared starts the package's server on first use; it is stopped by Main, or
// else when the test process ends.
func Shared() (*Server, error) {
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared, sharedErr = Start(ctx)
	})
	return shared, sharedErr
}

// Main runs the tests of a package whose TestMain hands them m, and stops the
// server they started, if any. Use it as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	return code
}

// Require returns the shared server. Without the server binaries the test
// skips, saying how to install them, unless CI=true, where it fails.
func Require(t testing.TB) *Server {
	t.Helper()
	s, err := Shared()
	switch {
	case err == nil:
		return s
	case errors.Is(err, ErrNoBinaries):
		// Skipped, counted by make test's last line (a failure under CI).
		needs.Missing(t, "PostgreSQL", "apt-get install -y postgresql", err.Error())
		return nil
	}
	t.Fatalf("pgtest: %v", err)
	return nil
}

// RequireDB returns a URL (as User, with its password) of a fresh database.
func RequireDB(t testing.TB) string {
	t.Helper()
	s := Require(t)
	name, err := s.NewDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.URL(User, name)
}
