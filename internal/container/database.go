package container

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/resources"
	"github.com/moby/moby/api/pkg/stdcopy"
	ctypes "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// DBSpec is a database server to start beside one target (db/postgres/README.md): the image
// built from db/postgres, at Port on the targets' address (loopback, or a remote engine's host),
// pinned and limited like a target.
type DBSpec struct {
	// Target is whose database it is: it names and labels the container.
	Target         string
	Image          string
	Port           int
	CPUSet         string
	Memory         int64
	StartupTimeout time.Duration
}

// Database is a started database server, fresh and empty but for its database.
type Database interface {
	// URL is what a target connects with (its DATABASE_URL):
	// postgresql://iot:<password>@<address>:<port>/iot, the address the targets' (127.0.0.1, or a
	// remote engine's host), the password drawn for this start.
	URL() string
	// CountRows counts the rows of the readings table, asked inside the server's container (not
	// through the target).
	CountRows(ctx context.Context) (int64, error)
	// Resources reads the server container's own cgroup counters.
	Resources() (resources.Source, error)
	Logs(ctx context.Context, lines int) string
	// Remove stops and deletes the container.
	Remove(ctx context.Context) error
}

// Databases starts database servers: implemented by the engines that can (Docker).
type Databases interface {
	StartDatabase(ctx context.Context, s DBSpec) (Database, error)
}

var _ Databases = (*Docker)(nil)

// Names of the database, its user and its table in the image (db/postgres/start.sh).
const (
	dbName  = "iot"
	dbUser  = "iot"
	dbTable = "readings"
)

// StartDatabase starts s's image on d's engine and waits until the server accepts logins on its
// port, at the address targets listen on (BIND_ADDRESS: loopback, or a remote engine's host,
// where the targets reach it and so does this check). The container is hardened as a target is
// (read-only root, no capabilities); the server runs as its own user and keeps its data in the
// tmpfs /tmp, so every start is an empty database. On failure the container is removed and the
// error carries its last log lines.
func (d *Docker) StartDatabase(ctx context.Context, s DBSpec) (Database, error) {
	name := s.Target + ".db"
	bind := d.bindAddress()
	if err := portFree(bind, s.Port); err != nil {
		return nil, fmt.Errorf("the database of %s: %w", s.Target, err)
	}
	password, err := newPassword()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := d.c.ContainerCreate(cctx, client.ContainerCreateOptions{
		Name: fmt.Sprintf("iotbench-%s-db-%d-%d", s.Target, d.pid, time.Now().UnixNano()%1e6),
		Config: &ctypes.Config{
			Image:  s.Image,
			Env:    []string{"PGPORT=" + strconv.Itoa(s.Port), "BIND_ADDRESS=" + bind, "POSTGRES_PASSWORD=" + password},
			Labels: d.labels(name),
		},
		HostConfig: d.hostConfig(Spec{CPUSet: s.CPUSet, Memory: s.Memory}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the database container of %s: %w", s.Target, err)
	}
	db := &dockerDatabase{
		dockerInstance: dockerInstance{d: d, id: created.ID},
		url:            fmt.Sprintf("postgresql://%s:%s@%s/%s", dbUser, password, net.JoinHostPort(bind, strconv.Itoa(s.Port)), dbName),
		addr:           net.JoinHostPort(bind, strconv.Itoa(s.Port)),
	}
	if _, err := d.c.ContainerStart(cctx, created.ID, client.ContainerStartOptions{}); err != nil {
		db.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("starting the database container of %s: %w", s.Target, err)
	}
	if err := db.waitReady(ctx, s.StartupTimeout); err != nil {
		logs := db.Logs(context.WithoutCancel(ctx), 30)
		db.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("the database of %s: %w\nlast lines of its log:\n%s", s.Target, err, logs)
	}
	if cg, err := db.cgroup(ctx); err == nil {
		db.cg = cg
	}
	return db, nil
}

// newPassword draws a password for one start: the server listens on the host's loopback (or a
// remote engine host's address), where any local process (or the network) could otherwise log in.
func newPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("drawing the database's password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

type dockerDatabase struct {
	dockerInstance
	url string
	// addr is where the server listens, host:port.
	addr string
}

var _ Database = (*dockerDatabase)(nil)

func (db *dockerDatabase) URL() string { return db.url }

// waitReady waits until the server answers a login with an authentication request: before that
// it refuses connections, or answers that it is starting up.
func (db *dockerDatabase) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	addr := db.addr
	var last error
	for {
		if last = acceptsLogins(ctx, addr); last == nil {
			return nil
		}
		ins, err := db.inspect(ctx)
		if err != nil {
			return err
		}
		if st := ins.Container.State; st != nil && !st.Running {
			return fmt.Errorf("the container exited (code %d) before the server accepted logins", st.ExitCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not accept logins on %s within %s: %v", addr, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// acceptsLogins sends PostgreSQL's startup message (protocol 3.0) and reads the first byte of the
// answer: 'R' (authentication request) means the server accepts logins; 'E' is an error, such as
// "the database system is starting up". The connection is closed before logging in.
func acceptsLogins(ctx context.Context, addr string) error {
	dialer := net.Dialer{Timeout: time.Second}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write(startupMessage(dbUser, dbName)); err != nil {
		return err
	}
	var kind [1]byte
	if _, err := io.ReadFull(conn, kind[:]); err != nil {
		return err
	}
	switch kind[0] {
	case 'R':
		return nil
	case 'E':
		return errors.New("the server answered the login with an error (still starting up?)")
	}
	return fmt.Errorf("the server answered the login with message type %q, not PostgreSQL's", kind[0])
}

// startupMessage is PostgreSQL's StartupMessage: its length, protocol 3.0, then name/value pairs.
func startupMessage(user, database string) []byte {
	var body bytes.Buffer
	binary.Write(&body, binary.BigEndian, int32(3<<16))
	for _, s := range []string{"user", user, "database", database, ""} {
		body.WriteString(s)
		body.WriteByte(0)
	}
	msg := binary.BigEndian.AppendUint32(nil, uint32(4+body.Len()))
	return append(msg, body.Bytes()...)
}

// CountRows runs psql inside the server's container, on its own socket (which trusts the
// container's user: it cannot be reached from outside the container).
func (db *dockerDatabase) CountRows(ctx context.Context) (int64, error) {
	out, err := db.exec(ctx, "psql", "--no-psqlrc", "-h", "/tmp", "-U", dbUser, "-d", dbName, "-tAc", "SELECT COUNT(*) FROM "+dbTable)
	if err != nil && strings.Contains(err.Error(), `relation "`+dbTable+`" does not exist`) {
		return 0, fmt.Errorf("the database server has no %s table: the target never created it there (did it ignore DATABASE_URL, or does another process answer on its port?)", dbTable)
	}
	if err != nil {
		return 0, fmt.Errorf("counting the rows in the database: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("counting the rows in the database: psql answered %q", strings.TrimSpace(out))
	}
	return n, nil
}

// exec runs cmd in the container and returns its output; a non-zero exit is an error with it.
func (db *dockerDatabase) exec(ctx context.Context, cmd ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := db.d.c.ExecCreate(ctx, db.id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", err
	}
	att, err := db.d.c.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", err
	}
	defer att.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, att.Reader); err != nil {
		return "", err
	}
	ins, err := db.d.c.ExecInspect(ctx, created.ID, client.ExecInspectOptions{})
	if err != nil {
		return "", err
	}
	if ins.ExitCode != 0 {
		return "", fmt.Errorf("%s exited with code %d: %s", cmd[0], ins.ExitCode, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
