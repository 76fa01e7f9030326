package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// SignalGrace is how long a command has to wind down after SIGINT or
// SIGTERM before its process is ended.
const SignalGrace = 2 * time.Second

// SignalContext returns a context that the first SIGINT or SIGTERM
// cancels. A command still running grace after it (stuck where no context
// reaches, such as a read of an input that never ends, or slow to wind
// down) is ended then, and a second signal ends it at once: the process
// exits with 128 plus the signal's number, as a shell reports a process a
// signal ended. stop releases the signals.
func SignalContext(grace time.Duration) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first os.Signal
		select {
		case first = <-sigs:
		case <-done:
			return
		}
		cancel()
		select {
		case <-sigs:
		case <-time.After(grace):
		case <-done:
			return
		}
		os.Exit(128 + signalNumber(first))
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func signalNumber(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 2 // os.Interrupt where signals have no numbers
}
