package container

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestStartupMessageIsPostgreSQLs checks the message byte for byte: its length, protocol 3.0, then
// the name/value pairs and a closing zero.
func TestStartupMessageIsPostgreSQLs(t *testing.T) {
	msg := startupMessage("iot", "db")
	want := []byte("\x00\x00\x00\x1e\x00\x03\x00\x00user\x00iot\x00database\x00db\x00\x00")
	if !bytes.Equal(msg, want) || int(binary.BigEndian.Uint32(msg)) != len(msg) {
		t.Errorf("startup message %q, want %q", msg, want)
	}
}

// fakeServer answers the first message of each connection with answer, then closes it.
func fakeServer(t *testing.T, answer []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			var length [4]byte
			if _, err := io.ReadFull(c, length[:]); err == nil {
				io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(length[:]))-4)
				c.Write(answer)
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

func TestAcceptsLoginsOnlyOnAnAuthenticationRequest(t *testing.T) {
	cases := []struct {
		name   string
		answer []byte
		want   string // "" = ready
	}{
		{"authentication request (SCRAM)", []byte("R\x00\x00\x00\x17\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00"), ""},
		{"starting up", []byte("E\x00\x00\x00\x40SFATAL\x00C57P03\x00Mthe database system is starting up\x00\x00"), "still starting up"},
		{"not PostgreSQL", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), `message type 'H', not PostgreSQL's`},
		{"closed without an answer", nil, "EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := acceptsLogins(context.Background(), fakeServer(t, c.answer))
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("acceptsLogins: %v, want %q", err, c.want)
			}
		})
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	if err := acceptsLogins(context.Background(), addr); err == nil {
		t.Error("nothing listens, yet it accepts logins")
	}
}

// TestPostgresServerStartsHardenedAndIsRemoved starts the real server image (db/postgres), as a
// cell would: it accepts logins, runs as the postgres user under the target's hardening, answers
// a count inside its container, has a cgroup to measure, and is gone once removed.
func TestPostgresServerStartsHardenedAndIsRemoved(t *testing.T) {
	d := connect(t)
	ctx := context.Background()
	img, err := d.Build(ctx, BuildSpec{Context: "../../db/postgres"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.StartDatabase(ctx, DBSpec{Target: "dbtest", Image: img, Port: freePort(t), CPUSet: "0", Memory: 512 << 20, StartupTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Remove(context.Background()) })
	if !strings.HasPrefix(db.URL(), "postgresql://iot:") || !strings.HasSuffix(db.URL(), "/iot") {
		t.Errorf("url %q", db.URL())
	}
	// A fresh database: no readings table until a target creates it.
	if _, err := db.CountRows(ctx); err == nil || !strings.Contains(err.Error(), "the database server has no readings table: the target never created it there") {
		t.Errorf("count in a fresh database: %v, want the missing table named", err)
	}
	dd := db.(*dockerDatabase)
	if out, err := dd.exec(ctx, "psql", "--no-psqlrc", "-h", "/tmp", "-U", "iot", "-d", "iot", "-tAc",
		"CREATE TABLE readings (id BIGINT); INSERT INTO readings VALUES (1), (2)"); err != nil {
		t.Fatalf("psql: %v %s", err, out)
	}
	if n, err := db.CountRows(ctx); err != nil || n != 2 {
		t.Errorf("count = %d, %v; want 2", n, err)
	}
	if who, err := dd.exec(ctx, "id", "-un"); err != nil || strings.TrimSpace(who) != "postgres" {
		t.Errorf("the server runs as %q (%v), want postgres", who, err)
	}
	ins, err := dd.inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hc := ins.Container.HostConfig
	if !hc.ReadonlyRootfs || len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" || hc.CpusetCpus != "0" || hc.Memory != 512<<20 {
		t.Errorf("host config: read-only %v, cap drop %v, cpuset %q, memory %d", hc.ReadonlyRootfs, hc.CapDrop, hc.CpusetCpus, hc.Memory)
	}
	if ins.Container.Config.Labels[LabelTarget] != "dbtest.db" {
		t.Errorf("labels %v", ins.Container.Config.Labels)
	}
	if _, err := db.Resources(); err != nil {
		t.Errorf("resources: %v", err)
	}
	if err := db.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := dd.inspect(ctx); err == nil {
		t.Error("the server's container still exists after Remove")
	}
}
