package chaos

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

func digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// callersFile lists the callers c0 … c<n-1> (token tok-<i>, cluster east),
// one a line, in order or reversed: every prefix of whole lines is a valid
// file that lacks the last caller.
func callersFile(n int, reversed bool) []byte {
	var b strings.Builder
	b.WriteString("callers:\n")
	for k := range n {
		i := k
		if reversed {
			i = n - 1 - k
		}
		fmt.Fprintf(&b, "  - {name: c%d, clusters: [east], credentials: [{tokenSHA256: %s}]}\n", i, digest("tok-"+strconv.Itoa(i)))
	}
	return []byte(b.String())
}

// installationDoc is a document whose sourceAllow gate comes after 6 MB
// of comments: a prefix that ends in the comments is valid without it.
func installationDoc(source string) []byte {
	var b strings.Builder
	b.WriteString("watchSeconds: \"30\"\n")
	line := "# " + strings.Repeat("padding ", 12) + "\n"
	for b.Len() < 6<<20 {
		b.WriteString(line)
	}
	b.WriteString("sourceAllow: \"*: " + source + "\"\n")
	return []byte(b.String())
}

func writeFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

func revisionOf(t *testing.T, path string) string {
	t.Helper()
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: path, DocumentExplicit: true})
	if err != nil {
		t.Fatal(err)
	}
	return inst.Revision
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// askingPod is the facts of a pod that asks for the agent.
func askingPod() *deciderv1.DecisionRequest {
	return &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Cluster: "east",
		Pod: &deciderv1.PodFacts{Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
			Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
				"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "k", "dynamic-config.rs/path": "/config/app.json"},
			Containers: []*deciderv1.Container{{Name: "app"}}}}
}

func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// Issue 38, items 3 and 7: the installation document (6 MB) and the
// callers file are rewritten in place, in 64 KiB chunks of whole lines,
// while decisions run: no decision is made under a partial document (every
// decision names one of the two whole revisions) and no caller is locked
// out by a partial callers file (the callers last in each order keep
// deciding).
func TestInPlaceRewritesUnderLoadPutNoDecisionFromAPartialFile(t *testing.T) {
	dir := t.TempDir()
	doc, callersPath := filepath.Join(dir, "installation.yaml"), filepath.Join(dir, "callers.yaml")
	consul, vault := installationDoc("consul"), installationDoc("vault")
	writeFile(t, doc, vault)
	whole := map[string]bool{revisionOf(t, doc): true}
	writeFile(t, doc, consul)
	whole[revisionOf(t, doc)] = true
	const callers = 2000
	inOrder, reversed := callersFile(callers, false), callersFile(callers, true)
	writeFile(t, callersPath, inOrder)
	d := start(t, "decider", nil, nil, "decider", "--plaintext", "--addr", "127.0.0.1:0", "--metrics-addr", "",
		"--installation", doc, "--callers", callersPath, "--cluster-name", "east", "--reload-interval", "20ms", "--drain-delay", "0s")
	client := deciderv1.NewDeciderServiceClient(dial(t, d.addr))

	var decisions, partial, lockedOut, failed atomic.Int64
	var lastErr atomic.Value
	stop := make(chan struct{})
	var load sync.WaitGroup
	for w := range 4 {
		load.Add(1)
		go func() {
			defer load.Done()
			// The two callers a prefix of either order lacks.
			tokens := []string{"tok-0", "tok-" + strconv.Itoa(callers-1)}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(withToken(context.Background(), tokens[(w+i)%2]), 5*time.Second)
				resp, err := client.Decide(ctx, askingPod())
				cancel()
				switch {
				case status.Code(err) == codes.Unauthenticated:
					lockedOut.Add(1)
				case err != nil:
					failed.Add(1)
					lastErr.Store(err.Error())
				case !whole[resp.GetDecision().GetAuditAnnotations()["revision"]]:
					partial.Add(1)
				default:
					decisions.Add(1)
				}
			}
		}()
	}
	for round := range 5 {
		docContent, callersContent := vault, reversed
		if round%2 == 1 {
			docContent, callersContent = consul, inOrder
		}
		testfile.RewriteInPlace(t, doc, docContent, 64<<10, 2*time.Millisecond)
		testfile.RewriteInPlace(t, callersPath, callersContent, 8<<10, 40*time.Millisecond) // about 1 s: the decider checks it every second
		time.Sleep(500 * time.Millisecond)                                                  // the whole files settle and are put in force
	}
	close(stop)
	load.Wait()
	t.Logf("5 rounds of in-place rewrites (a 6 MB document in 64 KiB chunks, a %d-caller file in 8 KiB chunks 40 ms apart) under 4 deciding workers: "+
		"%d decisions under a whole document, %d under a partial one, %d calls locked out by a partial callers file, %d other failures",
		callers, decisions.Load(), partial.Load(), lockedOut.Load(), failed.Load())
	if partial.Load() != 0 || lockedOut.Load() != 0 {
		t.Errorf("%d decisions from a partial document, %d calls refused by a partial callers file", partial.Load(), lockedOut.Load())
	}
	if failed.Load() != 0 || decisions.Load() == 0 {
		t.Errorf("%d decisions, %d failed (last: %v)", decisions.Load(), failed.Load(), lastErr.Load())
	}
}

// rawBytes sends an already encoded message: a request the generated types
// could not hold in memory.
type rawBytes struct{}

func (rawBytes) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}
func (rawBytes) Unmarshal(mem.BufferSlice, any) error { return nil }
func (rawBytes) Name() string                         { return "proto" }

var _ encoding.CodecV2 = rawBytes{}

// emptyContainers is a DecisionRequest of n empty containers (2 bytes each).
func emptyContainers(n int) []byte {
	pod := bytes.Repeat([]byte{0x42, 0x00}, n)
	req := []byte{0x08, 0x01, 0x12}
	req = binary.AppendUvarint(req, uint64(len(pod)))
	req = append(req, pod...)
	return append(req, 0x22, 0x04, 'e', 'a', 's', 't')
}

// Issue 38, items 1 and 7: junk-token 13 MB calls from 4 connections drove
// an exposed callers-file decider to 607 MB, and a known caller's 12 MB
// request of 6 M empty containers to 1.28 GB. In a memory cgroup of the
// chart's decider limit, both at once for ten seconds leave it alive and
// answering. (A known caller is held to the message budget per call, not
// to a number of calls: many budget-sized calls at once are its to answer
// for, see docs/threat-model.md.)
func TestAnAnonymousFloodDoesNotKillACallersFileDeciderInItsChartLimit(t *testing.T) {
	limit := chartLimit(t, "decider")
	cg := newCgroup(t, "flood", limit)
	dir := t.TempDir()
	callersPath := filepath.Join(dir, "callers.yaml")
	writeFile(t, callersPath, callersFile(10, false))
	d := start(t, "decider", cg, []string{"DYNAMIC_CONFIG_MEMORY_LIMIT=" + strconv.FormatInt(limit, 10)},
		"decider", "--plaintext", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--callers", callersPath, "--cluster-name", "east", "--drain-delay", "0s")
	baseline := cg.peak()

	junk := bytes.Repeat([]byte{0x42, 0x00}, 13<<20/2) // 13 MB of empty containers
	junk = append([]byte{0x12}, append(binary.AppendUvarint(nil, uint64(len(junk))), junk...)...)
	sixMillion := emptyContainers(6_000_000)
	stop := time.Now().Add(10 * time.Second)
	var calls, refused, tooMany atomic.Int64
	var flood sync.WaitGroup
	call := func(conn *grpc.ClientConn, token string, msg []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := conn.Invoke(withToken(ctx, token), deciderv1.DeciderService_Decide_FullMethodName, msg, new(deciderv1.DecisionResponse), grpc.ForceCodecV2(rawBytes{}))
		cancel()
		calls.Add(1)
		switch status.Code(err) {
		case codes.Unauthenticated:
			refused.Add(1)
		case codes.InvalidArgument:
			tooMany.Add(1)
		}
	}
	for range 4 { // 4 connections of junk-token 13 MB calls, 8 at a time each
		conn := dial(t, d.addr)
		for range 8 {
			flood.Add(1)
			go func() {
				defer flood.Done()
				for time.Now().Before(stop) {
					call(conn, "junk-token", junk)
				}
			}()
		}
	}
	flood.Add(1)
	go func() { // and a known caller's 12 MB request of 6 M empty containers, one at a time
		defer flood.Done()
		conn := dial(t, d.addr)
		for time.Now().Before(stop) {
			call(conn, "tok-1", sixMillion)
		}
	}()
	flood.Wait()
	alive, how := d.alive()
	t.Logf("decider in a %s cgroup (the chart's limit): %d flood calls in 10 s, %d refused UNAUTHENTICATED, %d INVALID_ARGUMENT (above the caps); peak %s (idle %s), VmHWM %s, OOM kills %d",
		mib(limit), calls.Load(), refused.Load(), tooMany.Load(), mib(cg.peak()), mib(baseline), mib(d.peakRSS()), cg.oomKills())
	if !alive || cg.oomKills() != 0 {
		t.Fatalf("the decider did not survive the flood (%s; OOM kills %d): %s", how, cg.oomKills(), d.lastLines())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := deciderv1.NewDeciderServiceClient(dial(t, d.addr)).Decide(withToken(ctx, "tok-1"), askingPod()); err != nil {
		t.Errorf("a known caller after the flood: %v", err)
	}
}

// review is an AdmissionReview of a Pod whose object is pod.
func review(pod string) []byte {
	return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},` +
		`"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"chaos"},"object":` + pod + `}}`)
}

// podWith is an asking pod whose spec holds the given members.
func podWith(spec string) string {
	return `{"metadata":{"name":"big","annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul",` +
		`"dynamic-config.rs/endpoint":"http://consul:8500","dynamic-config.rs/key":"k","dynamic-config.rs/path":"/config/app.json"}},"spec":{` + spec + `}}`
}

func list(n int, entry func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(entry(i))
	}
	return b.String()
}

// The largest reviews the caps allow, one per list that costs the most to
// hold (the caps count a pod's annotations too: these five take 35 bytes).
var capShapes = []struct{ name, pod string }{
	{"41 385 containers", podWith(`"containers":[` + list(41385, func(i int) string { return `{"name":"c` + strconv.Itoa(i) + `","image":"i"}` }) + `]`)},
	{"224 000 env entries", podWith(`"containers":[{"name":"app","image":"i","env":[` + list(224000, func(i int) string { return `{"name":"E","value":"v"}` }) + `]}]`)},
	{"780 000 arguments", podWith(`"containers":[{"name":"app","image":"i","args":[` + list(780000, func(int) string { return `""` }) + `]}]`)},
	{"224 000 labels", strings.Replace(podWith(`"containers":[{"name":"app","image":"i"}]`), `"name":"big",`,
		`"name":"big","labels":{`+list(224000, func(i int) string { return `"l` + strconv.Itoa(i) + `":""` })+`},`, 1)},
}

// frontDoorAndDecider starts a decider and a front door asking it, each in
// a memory cgroup of its chart limit.
func frontDoorAndDecider(t *testing.T, name string) (fd, d *proc, fdGroup, dGroup *cgroup) {
	t.Helper()
	fdLimit, dLimit := chartLimit(t, "frontdoor"), chartLimit(t, "decider")
	dGroup, fdGroup = newCgroup(t, name+"-decider", dLimit), newCgroup(t, name+"-frontdoor", fdLimit)
	d = start(t, "decider", dGroup, []string{"DYNAMIC_CONFIG_MEMORY_LIMIT=" + strconv.FormatInt(dLimit, 10)},
		"decider", "--plaintext", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--drain-delay", "0s")
	fd = start(t, "frontdoor", fdGroup, []string{"DYNAMIC_CONFIG_MEMORY_LIMIT=" + strconv.FormatInt(fdLimit, 10)},
		"frontdoor", "--plaintext", "--addr", "127.0.0.1:0", "--decider-target", d.addr, "--decider-plaintext", "--drain-delay", "0s")
	return fd, d, fdGroup, dGroup
}

// post sends body to the front door's path c at a time for the duration,
// counting the answers by their status code.
func post(t *testing.T, fd *proc, path string, body []byte, c int, duration time.Duration) map[string]int {
	t.Helper()
	var mu sync.Mutex
	codes := map[string]int{}
	stop := time.Now().Add(duration)
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 30 * time.Second}
			for first := true; first || time.Now().Before(stop); first = false {
				resp, err := client.Post("http://"+fd.addr+path, "application/json", bytes.NewReader(body))
				key := "error"
				if err == nil {
					var b bytes.Buffer
					_, _ = b.ReadFrom(resp.Body)
					resp.Body.Close()
					key = strconv.Itoa(resp.StatusCode)
					if i := bytes.Index(b.Bytes(), []byte(`"code":`)); i >= 0 {
						key = "answer " + string(b.Bytes()[i+7:i+10])
					} else if bytes.Contains(b.Bytes(), []byte(`"allowed":true`)) {
						key = "allowed"
					}
				}
				mu.Lock()
				codes[key]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return codes
}

// Issue 38, items 2 and 7: a 1.49 MB pod of 50 000 containers took a front
// door of 64 MiB down in 1 s. In a memory cgroup of the chart's limit it is
// refused as malformed, on both paths, eight at a time for ten seconds, and
// the front door stays up.
func TestAFiftyThousandContainerPodDoesNotKillTheFrontDoorInItsChartLimit(t *testing.T) {
	fd, d, fdGroup, dGroup := frontDoorAndDecider(t, "bigpod")
	body := review(podWith(`"containers":[` + list(50000, func(i int) string { return `{"name":"c` + strconv.Itoa(i) + `","image":"i"}` }) + `]`))
	mutate := post(t, fd, "/mutate", body, 8, 5*time.Second)
	validate := post(t, fd, "/validate", body, 8, 5*time.Second)
	fdAlive, fdHow := fd.alive()
	dAlive, _ := d.alive()
	t.Logf("a %s review of 50 000 containers, 8 at a time for 5 s per path: /mutate %v, /validate %v; front door (limit %s) peak %s, VmHWM %s, OOM kills %d; decider (limit %s) peak %s",
		mib(int64(len(body))), mutate, validate, mib(fdGroup.limit), mib(fdGroup.peak()), mib(fd.peakRSS()), fdGroup.oomKills(), mib(dGroup.limit), mib(dGroup.peak()))
	if !fdAlive || fdGroup.oomKills() != 0 || !dAlive || dGroup.oomKills() != 0 {
		t.Fatalf("killed (front door: %s; OOM kills %d, %d): %s", fdHow, fdGroup.oomKills(), dGroup.oomKills(), fd.lastLines())
	}
	if mutate["answer 400"] == 0 || validate["answer 400"] == 0 || mutate["allowed"]+validate["allowed"] != 0 {
		t.Errorf("want every answer a 400 refusal: /mutate %v, /validate %v", mutate, validate)
	}
}

// concurrentReviews is how many of the largest reviews at once the chart's
// limits are sized to hold (DYNAMIC_CONFIG_CHAOS_CONCURRENT overrides it, to
// measure).
var concurrentReviews = func() int {
	if n, err := strconv.Atoi(os.Getenv("DYNAMIC_CONFIG_CHAOS_CONCURRENT")); err == nil && n > 0 {
		return n
	}
	return 2
}()

// The largest reviews the caps allow (capShapes), each sent once and then
// concurrentReviews at a time, to a front door and a decider in memory cgroups of their
// chart limits: neither is killed, and the peaks are what the chart's
// requests and limits are sized from (docs/performance.md).
func TestTheLargestReviewsTheCapsAllowFitTheChartLimits(t *testing.T) {
	for _, shape := range capShapes {
		t.Run(shape.name, func(t *testing.T) {
			fd, d, fdGroup, dGroup := frontDoorAndDecider(t, strings.ReplaceAll(strings.ReplaceAll(shape.name, " ", ""), "\u00a0", ""))
			body := review(shape.pod)
			one := post(t, fd, "/mutate", body, 1, 0)
			fdOne, dOne := fdGroup.peak(), dGroup.peak()
			four := post(t, fd, "/mutate", body, concurrentReviews, 5*time.Second)
			fdAlive, fdHow := fd.alive()
			dAlive, dHow := d.alive()
			t.Logf("%s (%s review): one %v, %d at a time for 5 s %v; front door peak %s alone, %s %d at a time (limit %s); decider peak %s alone, %s (limit %s); OOM kills %d, %d",
				shape.name, mib(int64(len(body))), one, concurrentReviews, four, mib(fdOne), mib(fdGroup.peak()), concurrentReviews, mib(fdGroup.limit),
				mib(dOne), mib(dGroup.peak()), mib(dGroup.limit), fdGroup.oomKills(), dGroup.oomKills())
			if !fdAlive || !dAlive || fdGroup.oomKills() != 0 || dGroup.oomKills() != 0 {
				t.Fatalf("killed (front door %s, decider %s): %s\n%s", fdHow, dHow, fd.lastLines(), d.lastLines())
			}
			if one["error"]+four["error"] != 0 {
				t.Errorf("transport errors: %v %v", one, four)
			}
		})
	}
}
