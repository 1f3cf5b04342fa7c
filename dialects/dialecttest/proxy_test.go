package dialecttest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoServer answers every line with itself until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func echo(t *testing.T, c net.Conn, msg string) error {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != msg+"\n" {
		t.Fatalf("echo %q, got %q", msg, line)
	}
	return nil
}

func TestProxy(t *testing.T) {
	p := StartProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := echo(t, c, "hello"); err != nil {
		t.Fatal(err)
	}

	p.Cut()
	if err := echo(t, c, "after cut"); err == nil {
		t.Fatal("a connection open before Cut still works")
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while cut: %v, want connection refused", err)
	}

	p.Restore()
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dial after Restore: %v", err)
	}
	defer c2.Close()
	if err := echo(t, c2, "back"); err != nil {
		t.Fatal(err)
	}
	p.Restore() // a second Restore is harmless
	if err := echo(t, c2, "still"); err != nil {
		t.Fatal(err)
	}
}

func TestCutFraction(t *testing.T) {
	for _, tt := range []struct {
		in     string
		digits int
		want   string
	}{
		{"2024-02-29T23:59:59.123456+02:00", 6, "2024-02-29T23:59:59.123456+02:00"},
		{"2024-02-29T23:59:59.123456+02:00", 3, "2024-02-29T23:59:59.123+02:00"},
		{"2024-02-29T23:59:59.123456+02:00", 0, "2024-02-29T23:59:59+02:00"},
		{"2000-06-15T12:30:45.5Z", 0, "2000-06-15T12:30:45Z"},
		{"2000-06-15T12:30:45.5", 3, "2000-06-15T12:30:45.5"},
		{"1999-12-31T00:00:00", 2, "1999-12-31T00:00:00"},
	} {
		if got := cutFraction(tt.in, tt.digits); got != tt.want {
			t.Errorf("cutFraction(%q, %d) = %q, want %q", tt.in, tt.digits, got, tt.want)
		}
	}
	if got := trimFraction("2000-06-15T12:30:45.500"); got != "2000-06-15T12:30:45.5" {
		t.Errorf("trimFraction: %q", got)
	}
	if got := trimFraction("2000-06-15T12:30:45.000"); got != "2000-06-15T12:30:45" {
		t.Errorf("trimFraction: %q", got)
	}
}
