package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// serveFlags reads the flag names `minimal serve` defines from its source,
// so that a renamed flag breaks this test rather than a deployment.
func serveFlags(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "cmd", "minimal", "serve.go"))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{"data-dir": true} // dataDirFlag
	for _, m := range regexp.MustCompile(`fs\.[A-Za-z0-9]+\("([a-z0-9-]+)"`).FindAllStringSubmatch(string(src), -1) {
		flags[m[1]] = true
	}
	if len(flags) < 15 {
		t.Fatalf("found only %d serve flags in serve.go", len(flags))
	}
	return flags
}

// checkFlags fails for every --flag in args that serve does not define.
func checkFlags(t *testing.T, where string, args []string, flags map[string]bool) {
	t.Helper()
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !flags[name] {
			t.Errorf("%s: unknown serve flag %q", where, a)
		}
	}
}

// manifest is the part of a Kubernetes object the checks need.
type manifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Resources  []string          `yaml:"resources"`
	Spec       struct {
		Replicas *int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Ports []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				SecurityContext               struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Args    []string `yaml:"args"`
	EnvFrom []struct {
		ConfigMapRef struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			SecretKeyRef struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe  *probe `yaml:"readinessProbe"`
	LivenessProbe   *probe `yaml:"livenessProbe"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
	} `yaml:"securityContext"`
}

// TestKubernetesManifests parses every manifest and checks that they fit
// together: the Deployment runs several replicas with probes on /readyz and
// /livez, takes MINIMAL_CONTROL_DSN and MINIMAL_MASTER_KEY from the Secret,
// passes only real serve flags, each $(KEY) found in the ConfigMap, and the
// Service reaches the container's ports.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	byKind := map[string][]manifest{}
	names := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(false)
		n := 0
		for {
			var m manifest
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			n++
			if m.APIVersion == "" || m.Kind == "" {
				t.Errorf("%s: document %d lacks apiVersion or kind", f, n)
			}
			if m.Kind != "Kustomization" && m.Metadata.Name == "" {
				t.Errorf("%s: %s without metadata.name", f, m.Kind)
			}
			byKind[m.Kind] = append(byKind[m.Kind], m)
		}
		if n == 0 {
			t.Errorf("%s holds no document", f)
		}
		names[filepath.Base(f)] = true
	}
	for _, kind := range []string{"Deployment", "Service", "ConfigMap", "Secret", "Kustomization"} {
		if len(byKind[kind]) != 1 {
			t.Fatalf("%d %s manifests, want 1", len(byKind[kind]), kind)
		}
	}
	for _, r := range byKind["Kustomization"][0].Resources {
		if !names[r] {
			t.Errorf("kustomization lists %s, which is not in deploy/kubernetes", r)
		}
	}
	for n := range names {
		if n == "kustomization.yaml" {
			continue
		}
		found := false
		for _, r := range byKind["Kustomization"][0].Resources {
			found = found || r == n
		}
		if !found {
			t.Errorf("%s is not listed in kustomization.yaml", n)
		}
	}

	dep, svc, cm, sec := byKind["Deployment"][0], byKind["Service"][0], byKind["ConfigMap"][0], byKind["Secret"][0]
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		t.Errorf("deployment replicas %v, want several", dep.Spec.Replicas)
	}
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Metadata.Labels[k] != v || svc.Spec.Selector.MatchLabels[k] != "" && svc.Spec.Selector.MatchLabels[k] != v {
			t.Errorf("selector %s=%s does not match the pod labels", k, v)
		}
	}
	if !dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Error("pods may run as root")
	}
	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("container args %v do not start with serve", c.Args)
	}
	checkFlags(t, "deployment args", c.Args[1:], serveFlags(t))
	for _, a := range c.Args {
		for _, m := range regexp.MustCompile(`\$\(([A-Z0-9_]+)\)`).FindAllStringSubmatch(a, -1) {
			if _, ok := cm.Data[m[1]]; !ok {
				t.Errorf("arg %s refers to %s, which the ConfigMap lacks", a, m[1])
			}
		}
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef.Name != cm.Metadata.Name {
		t.Errorf("envFrom %+v does not load ConfigMap %s", c.EnvFrom, cm.Metadata.Name)
	}
	want := map[string]bool{"MINIMAL_CONTROL_DSN": false, "MINIMAL_MASTER_KEY": false}
	for _, e := range c.Env {
		ref := e.ValueFrom.SecretKeyRef
		if _, ok := want[e.Name]; ok {
			if ref.Name != sec.Metadata.Name {
				t.Errorf("%s comes from secret %q, want %q", e.Name, ref.Name, sec.Metadata.Name)
			}
			if _, ok := sec.StringData[ref.Key]; !ok {
				t.Errorf("%s refers to key %s, absent from the Secret template", e.Name, ref.Key)
			}
			want[e.Name] = true
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("%s is not taken from the Secret", name)
		}
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/livez" {
		t.Errorf("liveness probe %+v, want /livez", c.LivenessProbe)
	}
	if ape := c.SecurityContext.AllowPrivilegeEscalation; ape == nil || *ape {
		t.Error("privilege escalation not switched off")
	}
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["rest"] != 8080 || ports["mcp"] != 8484 {
		t.Errorf("container ports %v", ports)
	}
	for _, p := range svc.Spec.Ports {
		switch tp := p.TargetPort.(type) {
		case string:
			if _, ok := ports[tp]; !ok {
				t.Errorf("service port %s targets unknown port %q", p.Name, tp)
			}
		case int:
			if tp != ports[p.Name] {
				t.Errorf("service port %s targets %d", p.Name, tp)
			}
		default:
			t.Errorf("service port %s has target %v", p.Name, p.TargetPort)
		}
	}
	grace, err := time.ParseDuration(cm.Data["SHUTDOWN_GRACE"])
	if err != nil {
		t.Fatalf("SHUTDOWN_GRACE: %v", err)
	}
	if tg := time.Duration(dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; tg <= grace {
		t.Errorf("terminationGracePeriodSeconds %v is not longer than --shutdown-grace %v", tg, grace)
	}
}

// TestDockerfile reads the Dockerfile as a reviewer would: two stages, a
// static build, the Go version of go.mod, a non-root user, /data as a
// volume, both ports, a health check on /livez and only real serve flags.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	gomod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(gomod))
	if goVersion == nil {
		t.Fatal("no go directive in go.mod")
	}
	var user string
	var cmd []string
	for _, line := range strings.Split(df, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "USER" {
			user = f[1]
		}
		if rest, ok := strings.CutPrefix(line, "CMD "); ok {
			cmd = regexp.MustCompile(`"([^"]*)"`).FindAllString(rest, -1)
			for i := range cmd {
				cmd[i] = strings.Trim(cmd[i], `"`)
			}
		}
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"two stages", strings.Count(df, "\nFROM ") >= 2},
		{"static build", strings.Contains(df, "CGO_ENABLED=0")},
		{"builds ./cmd/minimal", strings.Contains(df, "./cmd/minimal")},
		{"go version of go.mod", strings.Contains(df, "ARG GO_VERSION="+goVersion[1])},
		{"non-root user", user != "" && user != "root" && !strings.HasPrefix(user, "0")},
		{"data volume", strings.Contains(df, `VOLUME ["/data"]`) && strings.Contains(df, "MINIMAL_DATA_DIR=/data")},
		{"ports", strings.Contains(df, "EXPOSE 8080 8484")},
		{"health check on /livez", regexp.MustCompile(`HEALTHCHECK[^\n]*(\\\n[^\n]*)*/livez`).MatchString(df)},
		{"serves", len(cmd) > 0 && cmd[0] == "serve"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("Dockerfile: %s", c.what)
		}
	}
	if len(cmd) > 0 {
		checkFlags(t, "Dockerfile CMD", cmd[1:], serveFlags(t))
	}
	ignore, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{".git", "bin"} {
		if !strings.Contains("\n"+string(ignore)+"\n", "\n"+must+"\n") {
			t.Errorf(".dockerignore does not leave out %s", must)
		}
	}
}

// TestSystemdUnit checks the unit's sections, its hardening and that
// ExecStart passes only real serve flags and stops later than the drain.
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("systemd", "minimal.service"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string][]string{}
	cur := ""
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = strings.Trim(line, "[]")
			sections[cur] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || cur == "" {
				t.Fatalf("line %d: %q is not key=value in a section", i+1, line)
			}
			sections[cur][k] = append(sections[cur][k], v)
		}
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if sections[s] == nil {
			t.Fatalf("no [%s] section", s)
		}
	}
	svc := sections["Service"]
	hardening := map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
		"MemoryDenyWriteExecute": "yes", "StateDirectory": "minimal", "KillSignal": "SIGTERM",
	}
	for k, v := range hardening {
		if got := svc[k]; len(got) == 0 || got[len(got)-1] != v {
			t.Errorf("%s=%v, want %q", k, got, v)
		}
	}
	exec := svc["ExecStart"]
	if len(exec) != 1 {
		t.Fatalf("ExecStart %v", exec)
	}
	f := strings.Fields(exec[0])
	if len(f) < 2 || f[1] != "serve" {
		t.Fatalf("ExecStart %q does not run serve", exec[0])
	}
	var args []string
	for _, a := range f[2:] {
		if !strings.HasPrefix(a, "$") {
			args = append(args, a)
		}
	}
	checkFlags(t, "ExecStart", args, serveFlags(t))
	grace := 20 * time.Second
	for i, a := range f {
		if a == "--shutdown-grace" && i+1 < len(f) {
			if grace, err = time.ParseDuration(f[i+1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop, err := time.ParseDuration(svc["TimeoutStopSec"][0])
	if err != nil || stop <= grace {
		t.Errorf("TimeoutStopSec %v (%v) is not longer than the shutdown grace %v", svc["TimeoutStopSec"], err, grace)
	}
	if sections["Install"]["WantedBy"] == nil {
		t.Error("no WantedBy")
	}
}
