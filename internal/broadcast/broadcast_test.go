package broadcast

import (
	"testing"
	"time"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestNotifyWakesEveryWaiterOfTheChannelHandedOutAndOnlyThose(t *testing.T) {
	var b Broadcast
	first, second := b.Changed(), b.Changed()
	if first != second {
		t.Fatal("two waiters before a change got different channels")
	}
	if closed(first) {
		t.Fatal("the channel is closed before any change")
	}
	b.Notify()
	if !closed(first) {
		t.Fatal("Notify did not close the channel handed out")
	}
	next := b.Changed()
	if closed(next) {
		t.Fatal("the channel handed out after the change is already closed")
	}
	b.Notify()
	select {
	case <-next:
	case <-time.After(time.Second):
		t.Fatal("the second Notify did not close the second channel")
	}
}

func TestNotifyWithoutAWaiterIsANoOp(t *testing.T) {
	var b Broadcast
	b.Notify()
	if closed(b.Changed()) {
		t.Fatal("a Notify before anyone waited closed a later waiter's channel")
	}
}
