package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/littlebitlabs/minimal/fault"
)

// TestFromRequest: the token is found under any spelling of the header
// names (net/http keeps them canonical), LB-Access-Token first, and every
// refusal is Unauthenticated.
func TestFromRequest(t *testing.T) {
	cases := []struct {
		name    string
		headers [][2]string
		want    string // "" for a refusal
	}{
		{"lb", [][2]string{{"LB-Access-Token", "t1"}}, "t1"},
		{"lb lower", [][2]string{{"lb-access-token", "t2"}}, "t2"},
		{"lb canonical", [][2]string{{"Lb-Access-Token", "t3"}}, "t3"},
		{"bearer", [][2]string{{"Authorization", "Bearer  t4 "}}, "t4"},
		{"bearer lower", [][2]string{{"authorization", "bearer t5"}}, "t5"},
		{"lb first", [][2]string{{"Authorization", "Bearer t6"}, {"LB-Access-Token", "t7"}}, "t7"},
		{"empty lb", [][2]string{{"LB-Access-Token", ""}, {"Authorization", "Bearer t8"}}, "t8"},
		{"basic", [][2]string{{"Authorization", "Basic dTpw"}}, ""},
		{"bearer only", [][2]string{{"Authorization", "Bearer"}}, ""},
		{"bearer blank", [][2]string{{"Authorization", "Bearer   "}}, ""},
		{"none", nil, ""},
		{"too large", [][2]string{{"LB-Access-Token", strings.Repeat("x", MaxTokenBytes+1)}}, ""},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, h := range c.headers {
			r.Header.Set(h[0], h[1])
		}
		got, err := FromRequest(r)
		if c.want == "" {
			if err == nil || fault.KindOf(err) != fault.Unauthenticated {
				t.Errorf("%s: got %q, %v; want an Unauthenticated refusal", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestPrincipalKey: a context that answers PrincipalKey with a Principal
// gives it to PrincipalFrom, as one made by WithPrincipal does.
func TestPrincipalKey(t *testing.T) {
	p := &Principal{IdentityID: "i"}
	if got := PrincipalFrom(context.WithValue(context.Background(), PrincipalKey(), p)); got != p {
		t.Fatalf("PrincipalFrom: %v", got)
	}
	if got := PrincipalFrom(WithPrincipal(context.Background(), p)); got != p {
		t.Fatalf("PrincipalFrom(WithPrincipal): %v", got)
	}
}
