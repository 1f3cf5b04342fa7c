package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/littlebitlabs/minimal/store"
)

// adminCall makes one admin API call with a JSON body and extra headers.
func adminCall(t *testing.T, method, url, token string, hdr map[string]string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("LB-Access-Token", token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestTwoReplicasEditPolicy runs two `serve` processes on one PostgreSQL
// control plane and edits one project's policy through both at once:
//
//   - editors each add a distinct rule to one template by GET, append, PUT
//     with If-Match, retrying on 409: every rule is there at the end;
//   - creators each add a distinct lock naming no version: every lock is
//     there at the end (the write is a compare-and-swap the server
//     retries, never a read-modify-write that overwrites the other
//     replica's edit).
func TestTwoReplicasEditPolicy(t *testing.T) {
	dsn := freshControlPlane(t)
	key := make([]byte, store.MasterKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	env := []string{store.EnvControlDSN + "=" + dsn, store.EnvMasterKey + "=" + base64.StdEncoding.EncodeToString(key)}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := launchReplica(t, "A", dirA, env)
	b := launchReplica(t, "B", dirB, env)
	a.waitReady(t)
	b.waitReady(t)
	admin := readToken(t, filepath.Join(dirA, "admin.token"))
	proj := "/minimal/api/admin/v1/orgs/demo/projects/demo"
	replicas := []*replica{a, b}

	rule := func(object string) map[string]any {
		return map[string]any{"object": object, "actions": []string{"read"}}
	}
	if code, _, body := adminCall(t, "POST", a.rest(proj+"/templates"), admin, nil,
		map[string]any{"name": "shared", "rules": []any{rule("mi/app/notes")}}); code != 201 {
		t.Fatalf("create the template: %d %s", code, body)
	}

	const editors, creators = 12, 12
	var conflicts atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range editors {
		r := replicas[i%2]
		wg.Go(func() {
			<-start
			object := fmt.Sprintf("pg/edit/t%02d", i)
			for attempt := 1; ; attempt++ {
				if attempt > 200 {
					t.Errorf("editor %d: no edit applied in 200 attempts", i)
					return
				}
				code, hdr, body := adminCall(t, "GET", r.rest(proj+"/templates/shared"), admin, nil, nil)
				if code != 200 {
					t.Errorf("editor %d: GET %d %s", i, code, body)
					return
				}
				var tpl struct {
					Rules   []map[string]any `json:"rules"`
					Version int64            `json:"version"`
				}
				if err := json.Unmarshal(body, &tpl); err != nil {
					t.Error(err)
					return
				}
				if hdr.Get("ETag") != fmt.Sprintf(`"%d"`, tpl.Version) {
					t.Errorf("editor %d: ETag %q for version %d", i, hdr.Get("ETag"), tpl.Version)
					return
				}
				rules := make([]any, 0, len(tpl.Rules)+1)
				for _, x := range tpl.Rules {
					rules = append(rules, map[string]any{"object": x["object"], "actions": x["actions"]})
				}
				rules = append(rules, rule(object))
				code, _, body = adminCall(t, "PUT", r.rest(proj+"/templates/shared"), admin,
					map[string]string{"If-Match": hdr.Get("ETag")}, map[string]any{"rules": rules})
				switch code {
				case 200:
					return
				case 409:
					conflicts.Add(1)
					continue
				default:
					t.Errorf("editor %d: PUT %d %s", i, code, body)
					return
				}
			}
		})
	}
	for i := range creators {
		r := replicas[i%2]
		wg.Go(func() {
			<-start
			object := fmt.Sprintf("pg/lock%02d", i)
			code, _, body := adminCall(t, "POST", r.rest(proj+"/locks"), admin, nil, map[string]any{"object": object, "mask": "-r--"})
			if code != 201 {
				t.Errorf("creator %d: POST %d %s", i, code, body)
			}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)

	code, _, body := adminCall(t, "GET", b.rest(proj+"/templates/shared"), admin, nil, nil)
	var tpl struct {
		Rules []struct {
			Object string `json:"object"`
		} `json:"rules"`
	}
	if code != 200 || json.Unmarshal(body, &tpl) != nil {
		t.Fatalf("read the template: %d %s", code, body)
	}
	var got []string
	for _, r := range tpl.Rules {
		got = append(got, r.Object)
	}
	want := []string{"mi/app/notes"}
	for i := range editors {
		want = append(want, fmt.Sprintf("pg/edit/t%02d", i))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rules after %d concurrent edits through two replicas:\n got %v\nwant %v", editors, got, want)
	}

	code, _, body = adminCall(t, "GET", a.rest(proj+"/locks"), admin, nil, nil)
	var locks struct {
		Data []struct {
			Object string `json:"object"`
		} `json:"data"`
	}
	if code != 200 || json.Unmarshal(body, &locks) != nil {
		t.Fatalf("read the locks: %d %s", code, body)
	}
	n := 0
	for _, l := range locks.Data {
		var i int
		if _, err := fmt.Sscanf(l.Object, "pg/lock%02d", &i); err == nil {
			n++
		}
	}
	if n != creators {
		t.Errorf("%d of %d locks created concurrently through two replicas are there: %s", n, creators, body)
	}
	t.Logf("%d edits with If-Match and %d creates without a version through two replicas in %v; %d edits refused as stale (409) and retried",
		editors, creators, took.Round(time.Millisecond), conflicts.Load())
	a.stop(t)
	b.stop(t)
}
