package engine_test

// The golden corpus under a rollout (spec 10 §3, issue 41): every case goes
// through the two doors — the front door handler and a decider (decider/
// server around decider/service) over real gRPC — with a rollout in
// shadow, and its answer must be the answer the same doors give without a
// rollout (the answer the two-door golden test pins to review.json), byte
// for byte. With a candidate that decides as the active does (the active's
// own installation, its agent image named explicitly), every comparison is
// same; with a candidate that changes the agent image, every injected case
// is changed, each agent's image path named. And for every case the
// candidate rebuilt from the case's own document and environment is the
// active installation (the same revision: inert).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/classloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// corpusDir is the golden corpus (spec 07 §7.2).
const corpusDir = "../../test/cases"

const candidateImage = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0"

// corpusCase is one case of the golden corpus, read.
type corpusCase struct {
	name, dir string
	namespace string
	pod       []byte // the Pod, or a workload's pod template (JSON)
	environ   []string
	document  string
	classes   *classes.Set
	inst      *installation.Installation
}

func readCorpus(t *testing.T) []corpusCase {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatalf("read the corpus: %v", err)
	}
	var out []corpusCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c := corpusCase{name: e.Name(), dir: filepath.Join(corpusDir, e.Name())}
		ns, err := os.ReadFile(filepath.Join(c.dir, "namespace"))
		if err != nil {
			t.Fatal(err)
		}
		c.namespace = strings.TrimSpace(string(ns))
		y, err := os.ReadFile(filepath.Join(c.dir, "pod.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		target, err := manifest.ObjectPodTarget(obj, "", c.namespace, "")
		if err != nil || target.Pod == nil {
			t.Fatalf("%s: pod.yaml is neither a Pod nor a workload: %v", c.name, err)
		}
		c.pod = target.Pod
		c.environ = caseEnviron(t, c.dir)
		doc, err := os.ReadFile(filepath.Join(c.dir, "installation.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		c.document = string(doc)
		if data, err := os.ReadFile(filepath.Join(c.dir, "classes.yaml")); err == nil {
			if c.classes, err = classloader.Parse("classes.yaml", data); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		c.inst, err = installationloader.Load(installationloader.Options{DocumentPath: filepath.Join(c.dir, "installation.yaml"), DocumentExplicit: true, Environ: c.environ})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out = append(out, c)
	}
	if len(out) < 50 {
		t.Fatalf("%d cases in %s: the corpus moved?", len(out), corpusDir)
	}
	return out
}

// caseEnviron reads a case's optional environment file (NAME=value lines).
func caseEnviron(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "environment"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	environ := []string{}
	for _, line := range strings.Split(string(data), "\n") {
		if l := strings.TrimSpace(line); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		environ = append(environ, strings.TrimRight(strings.TrimLeft(line, " \t"), "\r"))
	}
	return environ
}

// candidate writes the rollout document whose candidate is the case's own
// installation document, with extra laid over its environment, and loads it
// over the case's environment as the decider would.
func (c corpusCase) candidate(t *testing.T, stage string, extra map[string]string) *rollout.Rollout {
	t.Helper()
	var b strings.Builder
	b.WriteString("candidate:\n")
	if !blankYAML(c.document) { // the corpus's documents are block maps
		for _, line := range strings.Split(strings.TrimRight(c.document, "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	if len(extra) > 0 {
		env, err := json.Marshal(extra)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("  environment: " + string(env) + "\n")
	}
	if blankYAML(c.document) && len(extra) == 0 {
		b.Reset()
		b.WriteString("candidate: {}\n")
	}
	b.WriteString("stage: " + stage + "\n")
	if stage == "canary" {
		b.WriteString("canary: {percent: 100}\n")
	}
	path := filepath.Join(t.TempDir(), "rollout.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := rolloutloader.Load(rolloutloader.Options{Path: path, Environ: c.environ})
	if err != nil || r == nil {
		t.Fatalf("%s: the rollout of\n%s\n%v", c.name, b.String(), err)
	}
	return r
}

// blankYAML reports a document of comments and whitespace only.
func blankYAML(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// rolloutDoors is the front door handler before a decider that holds the
// case's installation under rollout r (nil: none), over real gRPC.
type rolloutDoors struct {
	handler http.Handler
	state   *rolloutstate.State
}

func startRolloutDoors(t *testing.T, c corpusCase, r *rollout.Rollout) *rolloutDoors {
	t.Helper()
	store := installationloader.NewStore(c.inst)
	var cs *classes.Store
	if c.classes != nil {
		cs = classes.NewStore(c.classes)
	}
	st := rolloutstate.New(rolloutstate.Config{Rollouts: rolloutloader.NewStore(r), Installation: store})
	srv, err := server.New(server.Config{}, store, service.New(store, nil, nil).WithClasses(cs).WithRollouts(st))
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///rollout-decider",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Shutdown(time.Second); lis.Close() })
	return &rolloutDoors{handler: handler.New(handler.Config{Decider: deciderv1.NewDeciderServiceClient(conn), Timeout: engine.Timeout}), state: st}
}

func (d *rolloutDoors) door(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	d.handler.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		return nil, nil, fmt.Errorf("HTTP %d: %s", w.Code, w.Body.Bytes())
	}
	resp, err := review.DecodeAnswer(w.Body.Bytes())
	return resp, nil, err
}

// answerBytes is an answer as JSON without its decision id (another per
// call), the rest byte for byte.
func answerBytes(t *testing.T, a *engine.Admitted) string {
	t.Helper()
	r := *a.Answer
	if r.AuditAnnotations != nil {
		r.AuditAnnotations = map[string]string{}
		for k, v := range a.Answer.AuditAnnotations {
			if k != annotation.AuditDecisionID {
				r.AuditAnnotations[k] = v
			}
		}
	}
	data, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data) + "\npatch " + string(a.Patch)
}

// today is the case's answer through the engine's doors, without a rollout.
func today(t *testing.T, c corpusCase) (*engine.Admitted, string) {
	t.Helper()
	e, err := engine.New(c.inst, c.classes)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, err := e.AdmitPod(c.pod, c.namespace, "")
	if err != nil {
		t.Fatal(err)
	}
	return a, answerBytes(t, a)
}

func TestEveryCorpusCaseIsItsOwnCandidate(t *testing.T) {
	for _, c := range readCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			r := c.candidate(t, "canary", nil)
			if !r.Inert(c.inst.Revision) {
				t.Errorf("the candidate rebuilt from the case's document and environment is %s, the active %s", r.Candidate.Revision, c.inst.Revision)
			}
			want, _ := today(t, c)
			doors := startRolloutDoors(t, c, r)
			got, err := engine.AdmitThrough(doors.door, c.inst.EnvPolicy, engine.UID, c.pod, c.namespace, "")
			if err != nil {
				t.Fatal(err)
			}
			if answerBytes(t, got) != answerBytes(t, want) {
				t.Errorf("under an inert canary the answer changed:\n got %s\nwant %s", answerBytes(t, got), answerBytes(t, want))
			}
		})
	}
}

func TestUnderACandidateThatDecidesAsTheActiveEveryComparisonIsSameAndEveryAnswerTodays(t *testing.T) {
	compared := 0
	for _, c := range readCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			// The active's own installation with its agent image named: another
			// revision (unless the case names the same image the same way),
			// the same decisions.
			r := c.candidate(t, "shadow", map[string]string{"DYNAMIC_CONFIG_AGENT_IMAGE": c.inst.AgentImage})
			_, want := today(t, c)
			doors := startRolloutDoors(t, c, r)
			got, err := engine.AdmitThrough(doors.door, c.inst.EnvPolicy, engine.UID, c.pod, c.namespace, "")
			if err != nil {
				t.Fatal(err)
			}
			if a := answerBytes(t, got); a != want {
				t.Errorf("a shadow changed the answer:\n got %s\nwant %s", a, want)
			}
			st, _ := doors.state.Status()
			if st.Inert {
				return
			}
			counts := st.Report.Counts
			for _, res := range rollout.Results[1:] {
				if counts[res] != 0 {
					t.Errorf("%d comparisons %s; differing: %+v", counts[res], res, st.Report.Differing)
				}
			}
			compared += int(counts[rollout.Same])
		})
	}
	t.Logf("%d comparisons, all same", compared)
	if compared < 50 {
		t.Errorf("only %d comparisons were made over the corpus: the candidates were inert", compared)
	}
}

func TestUnderACandidateWithAnotherAgentImageEveryInjectedCaseIsChangedAtItsImages(t *testing.T) {
	injected := 0
	for _, c := range readCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			r := c.candidate(t, "shadow", map[string]string{"DYNAMIC_CONFIG_AGENT_IMAGE": candidateImage})
			was, want := today(t, c)
			doors := startRolloutDoors(t, c, r)
			got, err := engine.AdmitThrough(doors.door, c.inst.EnvPolicy, engine.UID, c.pod, c.namespace, "")
			if err != nil {
				t.Fatal(err)
			}
			if a := answerBytes(t, got); a != want {
				t.Errorf("a shadow changed the answer:\n got %s\nwant %s", a, want)
			}
			st, _ := doors.state.Status()
			rep := st.Report
			// Every agent whose image is the installation's (not one the pod
			// named with agent-image) gets the candidate's.
			var images []string
			for _, a := range was.Mutate.GetPlan().GetAgents() {
				if a.GetContainer().GetImage() != c.inst.AgentImage {
					continue
				}
				list := "containers"
				if a.GetList() == deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS {
					list = "initContainers"
				}
				images = append(images, list+"["+a.GetContainer().GetName()+"].image")
			}
			if was.Mutate.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || len(images) == 0 {
				if n := rep.Counts[rollout.Changed]; n != 0 {
					t.Errorf("a case that injects no image of the installation's changed %d times: %+v", n, rep.Differing)
				}
				return
			}
			injected++
			if rep.Counts[rollout.Changed] != 1 || len(rep.Differing) != 1 {
				t.Fatalf("counts %v, differing %+v; want the injection changed", rep.Counts, rep.Differing)
			}
			if paths := rep.Differing[0].Paths; !slices.Equal(paths, images) {
				t.Errorf("paths %q, want the image of every agent the installation's image went into, and nothing else: %q", paths, images)
			}
		})
	}
	t.Logf("%d injected cases changed at their images", injected)
	if injected < 40 {
		t.Errorf("only %d injected cases in the corpus", injected)
	}
}
