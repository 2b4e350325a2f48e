package podcaps

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// storedSize is the size of pod as the API server stores it (protobuf,
// k8s.io/api's own encoding).
func storedSize(t *testing.T, pod *corev1.Pod) int {
	t.Helper()
	b, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// smallestContainer is the smallest container validation and defaulting
// let through: a name and an image, and the defaulted members at their
// shortest.
func smallestContainer() corev1.Container {
	return corev1.Container{Name: "a", Image: "b", TerminationMessagePath: "x", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullNever}
}

// inContainer is a pod of one smallest container holding n entries of a
// nested list.
func inContainer(n int, set func(*corev1.Container, int)) *corev1.Pod {
	c := smallestContainer()
	set(&c, n)
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

// podWith builds, per field, a pod holding n of the field's smallest
// entries (and nothing else the field does not need).
var podWith = map[Field]func(n int) *corev1.Pod{
	Containers: func(n int) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: repeat(n, smallestContainer())}}
	},
	InitContainers: func(n int) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{InitContainers: repeat(n, smallestContainer())}}
	},
	EphemeralContainers: func(n int) *corev1.Pod {
		e := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(smallestContainer())}
		return &corev1.Pod{Spec: corev1.PodSpec{EphemeralContainers: repeat(n, e)}}
	},
	Env: func(n int) *corev1.Pod {
		return inContainer(n, func(c *corev1.Container, n int) { c.Env = repeat(n, corev1.EnvVar{Name: "a"}) })
	},
	VolumeMounts: func(n int) *corev1.Pod {
		return inContainer(n, func(c *corev1.Container, n int) {
			c.VolumeMounts = repeat(n, corev1.VolumeMount{Name: "a", MountPath: "/"})
		})
	},
	Command: func(n int) *corev1.Pod {
		return inContainer(n, func(c *corev1.Container, n int) { c.Command = repeat(n, "") })
	},
	Args: func(n int) *corev1.Pod {
		return inContainer(n, func(c *corev1.Container, n int) { c.Args = repeat(n, "") })
	},
	Resources: func(n int) *corev1.Pod {
		return inContainer(n, func(c *corev1.Container, n int) { c.Resources.Claims = repeat(n, corev1.ResourceClaim{Name: "a"}) })
	},
	Volumes: func(n int) *corev1.Pod {
		v := corev1.Volume{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		return &corev1.Pod{Spec: corev1.PodSpec{Volumes: repeat(n, v)}}
	},
	ImagePullSecrets: func(n int) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{ImagePullSecrets: repeat(n, corev1.LocalObjectReference{})}}
	},
	SupplementalGroups: func(n int) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{SupplementalGroups: repeat(n, int64(0))}}}
	},
	// Map keys are distinct: the measured entry is the key "a" with an
	// empty value, and the others are there for the prefix lengths.
	Labels: func(n int) *corev1.Pod {
		p := &corev1.Pod{}
		p.Labels = keys(n)
		return p
	},
	Annotations: func(n int) *corev1.Pod {
		p := &corev1.Pod{}
		p.Annotations = keys(n)
		return p
	},
}

func repeat[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// keys are n distinct keys: 98 of three characters, the rest of one, so
// that the hundredth is a key of one character ("b").
func keys(n int) map[string]string {
	m := map[string]string{}
	for i := range min(n, 98) {
		m[fmt.Sprintf("k%02d", i)] = ""
	}
	for i := range max(n-98, 0) {
		m[string(rune('a'+i))] = ""
	}
	return m
}

func TestEachFloorIsTheStoredSizeOfTheSmallestEntryTheAPIServerKeeps(t *testing.T) {
	for _, f := range Fields() {
		t.Run(f.Name()+" takes its floor stored", func(t *testing.T) {
			build, ok := podWith[f]
			if !ok {
				t.Fatal("no pod builder for the field")
			}
			// The hundredth entry's own bytes: no length prefix grows between 99 and 100.
			if got := storedSize(t, build(100)) - storedSize(t, build(99)); got != f.Floor() {
				t.Errorf("the smallest entry takes %d bytes stored; the floor is %d", got, f.Floor())
			}
		})
	}
	t.Run("a resources limit entry takes more than a claim, so the claim is the floor", func(t *testing.T) {
		one := inContainer(0, func(*corev1.Container, int) {})
		limit := inContainer(1, func(c *corev1.Container, _ int) {
			c.Resources.Limits = corev1.ResourceList{"cpu": resource.MustParse("0")}
		})
		if got := storedSize(t, limit) - storedSize(t, one); got < Resources.Floor() {
			t.Errorf("a limit entry takes %d bytes, below the floor %d", got, Resources.Floor())
		}
	})
}

func TestAStorablePodIsNeverRefusedAndAnUnstorableOneAlways(t *testing.T) {
	cases := []struct {
		name    string
		counts  func(*Counts)
		refused bool
		want    []string
	}{
		{"no entries", func(*Counts) {}, false, nil},
		{"a field at its cap with nothing else", func(c *Counts) { c[Containers] = Containers.Cap() }, false, nil},
		{"a field one above its cap names the field, the count and the cap", func(c *Counts) { c[Containers] = Containers.Cap() + 1 }, true,
			[]string{"spec.containers holds 41392 entries, above the cap of 41391", "1572864 bytes"}},
		{"50 000 containers", func(c *Counts) { c[Containers] = 50000 }, true, []string{"spec.containers holds 50000 entries"}},
		{"two fields under their caps that do not fit together name the larger share", func(c *Counts) {
			c[Containers] = Containers.Cap() / 2
			c[Env] = Env.Cap()/2 + 100
		}, true, []string{"above the 1572864 it can store", "env holds 112447 entries (cap 224694 alone)"}},
		{"every field at a thirteenth of its cap fits (twelve fields)", func(c *Counts) {
			for _, f := range Fields() {
				c[f] = f.Cap() / 13
			}
		}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var counts Counts
			c.counts(&counts)
			err := counts.Check()
			if (err != nil) != c.refused {
				t.Fatalf("Check = %v, refused %v", err, c.refused)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}
