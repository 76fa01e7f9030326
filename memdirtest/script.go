package memdirtest

import "sync"

// script is what the fake servers share: the requests they received, the
// scripted replies still to send, and the handler that answers once the
// script runs out. Q is the server's request type, R its reply type.
type script[Q, R any] struct {
	mu       sync.Mutex
	queue    []R
	handler  func(*Q) R
	requests []*Q
}

// enqueue appends replies to the script; each request takes the next one.
func (s *script[Q, R]) enqueue(replies ...R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// handle sets the function that answers requests once the queue is empty.
func (s *script[Q, R]) handle(f func(*Q) R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// all returns the requests received so far, in order.
func (s *script[Q, R]) all() []*Q {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Q(nil), s.requests...)
}

// last returns the latest request, or nil when there was none.
func (s *script[Q, R]) last() *Q {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return nil
	}
	return s.requests[len(s.requests)-1]
}

// record notes a request and returns its 1-based sequence number.
func (s *script[Q, R]) record(req *Q) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	return len(s.requests)
}

// take returns the reply for req: the next scripted one, else the
// handler's (called without the lock held). ok is false when there is
// neither.
func (s *script[Q, R]) take(req *Q) (r R, ok bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r = s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	h := s.handler
	s.mu.Unlock()
	if h == nil {
		return r, false
	}
	return h(req), true
}
