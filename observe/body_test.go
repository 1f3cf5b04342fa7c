package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// TestBodyDeadlineLiftedAtEnd: once a body is read to its end, the deadline
// no longer applies: a handler answering after it (a long read) keeps its
// request context, and the connection is kept for the next request.
func TestBodyDeadlineLiftedAtEnd(t *testing.T) {
	const timeout = 200 * time.Millisecond
	srv := httptest.NewServer(BodyDeadline(timeout)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(3 * timeout):
		case <-r.Context().Done():
		}
		fmt.Fprintf(w, "%d %v", len(b), r.Context().Err())
	})))
	defer srv.Close()
	reused := 0
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"a":1}`))
		req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) {
				if ci.Reused {
					reused++
				}
			},
		}))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "7 <nil>" || resp.Close {
			t.Fatalf("request %d: %d %q close=%v, want 200 \"7 <nil>\" on a kept connection", i, resp.StatusCode, b, resp.Close)
		}
	}
	if reused != 1 {
		t.Errorf("the second request reused %d connections, want 1", reused)
	}
}

// TestBodyDeadlineNoBody: a request without a body is not touched (no
// deadline, no "Connection: close").
func TestBodyDeadlineNoBody(t *testing.T) {
	srv := httptest.NewServer(BodyDeadline(time.Millisecond)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(w, r.Context().Err())
	})))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "<nil>" || resp.Close {
		t.Fatalf("%d %q close=%v, want 200 \"<nil>\" on a kept connection", resp.StatusCode, b, resp.Close)
	}
}

// TestBodyDeadlineUnread: an answer sent before the body is read carries
// "Connection: close" and the connection is closed; a body that does not
// arrive in time fails its read with a *BodyTimeoutError.
func TestBodyDeadlineUnread(t *testing.T) {
	const timeout = 100 * time.Millisecond
	srv := httptest.NewServer(BodyDeadline(timeout)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := w.Header()["Connection"]; len(got) != 1 || got[0] != "close" {
			t.Errorf("Connection header %q", got)
		}
		if r.URL.Path == "/read" {
			_, err := io.ReadAll(r.Body)
			var te *BodyTimeoutError
			if !errors.As(err, &te) || te.Timeout != timeout {
				t.Errorf("read: %v, want a BodyTimeoutError", err)
			}
		}
		w.WriteHeader(http.StatusUnauthorized)
	})))
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("%d close=%v, want 401 on a closed connection", resp.StatusCode, resp.Close)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"a":`)) }()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/read", pr)
	req.ContentLength = 100
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("%d close=%v, want 401 on a closed connection", resp.StatusCode, resp.Close)
	}
}
