//go:build linux

package uring

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structures (include/uapi/linux/io_uring.h).

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// sqe is a submission queue entry, 64 bytes.
type sqe struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off           uint64 // or addr2
	addr          uint64
	len           uint32
	opFlags       uint32 // open_flags, rw_flags
	userData      uint64
	bufIndex      uint16
	personality   uint16
	fileIndex     int32
	addr3         uint64
	_             uint64
}

// cqe is a completion queue entry, 16 bytes.
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

const (
	opOpenat = 18
	opClose  = 19
	opRead   = 22

	enterGetEvents   = 1 << 0
	featSingleMmap   = 1 << 0
	offSQRing        = 0
	offCQRing        = 0x8000000
	offSQEs          = 0x10000000
	registerProbe    = 8
	probeOpSupported = 1 << 0
)

// Ring is an io_uring instance. It is not safe for concurrent use.
type Ring struct {
	fd       int
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqArray  []uint32
	sqes     []sqe
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []cqe
	maps     [][]byte
	entries  uint32
	inFlight uint32 // completions not reaped
	// Per file of a batch: the descriptors.
	fds []int32
}

// New returns a ring of at least entries submission entries, or an error
// where io_uring cannot serve ReadFiles.
func New(entries uint32) (*Ring, error) {
	var p params
	fd, _, errno := syscall.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &Ring{fd: int(fd), entries: p.sqEntries}
	if err := r.mapRings(&p); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.probe(opOpenat, opClose, opRead); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *Ring) mapRings(p *params) error {
	mmap := func(off int64, size uint32) ([]byte, error) {
		b, err := unix.Mmap(r.fd, off, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			return nil, fmt.Errorf("io_uring mmap: %w", err)
		}
		r.maps = append(r.maps, b)
		return b, nil
	}
	sqSize := p.sqOff.array + p.sqEntries*4
	cqSize := p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{}))
	if p.features&featSingleMmap != 0 {
		sqSize = max(sqSize, cqSize)
	}
	sq, err := mmap(offSQRing, sqSize)
	if err != nil {
		return err
	}
	cq := sq
	if p.features&featSingleMmap == 0 {
		if cq, err = mmap(offCQRing, cqSize); err != nil {
			return err
		}
	}
	se, err := mmap(offSQEs, p.sqEntries*uint32(unsafe.Sizeof(sqe{})))
	if err != nil {
		return err
	}
	at := func(b []byte, off uint32) unsafe.Pointer { return unsafe.Pointer(&b[off]) }
	r.sqHead = (*uint32)(at(sq, p.sqOff.head))
	r.sqTail = (*uint32)(at(sq, p.sqOff.tail))
	r.sqMask = *(*uint32)(at(sq, p.sqOff.ringMask))
	r.sqArray = unsafe.Slice((*uint32)(at(sq, p.sqOff.array)), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(at(se, 0)), p.sqEntries)
	r.cqHead = (*uint32)(at(cq, p.cqOff.head))
	r.cqTail = (*uint32)(at(cq, p.cqOff.tail))
	r.cqMask = *(*uint32)(at(cq, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*cqe)(at(cq, p.cqOff.cqes)), p.cqEntries)
	return nil
}

// probe checks that the kernel supports every op.
func (r *Ring) probe(ops ...uint8) error {
	// struct io_uring_probe: a 16-byte head, then 256 ops of 8 bytes.
	var buf [16 + 256*8]byte
	_, _, errno := syscall.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerProbe, uintptr(unsafe.Pointer(&buf[0])), 256, 0, 0)
	if errno != 0 {
		return fmt.Errorf("io_uring probe: %w", errno)
	}
	last := buf[0]
	for _, op := range ops {
		if op > last || buf[16+int(op)*8+2]&probeOpSupported == 0 {
			return fmt.Errorf("io_uring: operation %d not supported", op)
		}
	}
	return nil
}

// Close releases the ring.
func (r *Ring) Close() error {
	for _, m := range r.maps {
		unix.Munmap(m)
	}
	r.maps = nil
	return unix.Close(r.fd)
}

// Entries returns the ring's submission entries: a batch of ReadFiles
// takes two a file.
func (r *Ring) Entries() int { return int(r.entries) }

// next returns a zeroed submission entry, queued.
func (r *Ring) next() *sqe {
	t := *r.sqTail
	i := t & r.sqMask
	r.sqArray[i] = i
	s := &r.sqes[i]
	*s = sqe{}
	atomic.StoreUint32(r.sqTail, t+1)
	r.inFlight++
	return s
}

// errBroken is returned when the ring misbehaves; it must not be used
// again.
var errBroken = errors.New("io_uring: ring out of step")

// submitAndReap submits what is queued, waits for every queued operation
// to complete and calls done with each completion.
func (r *Ring) submitAndReap(done func(userData uint64, res int32)) error {
	for r.inFlight > 0 {
		// Submit what the kernel has not taken yet, and wait for every
		// operation to complete (a signal may cut the wait short).
		toSubmit := *r.sqTail - atomic.LoadUint32(r.sqHead)
		_, _, errno := syscall.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(r.inFlight), enterGetEvents, 0, 0)
		if errno != 0 && errno != syscall.EINTR && errno != syscall.EAGAIN && errno != syscall.EBUSY {
			return fmt.Errorf("io_uring_enter: %w", errno)
		}
		h := *r.cqHead
		t := atomic.LoadUint32(r.cqTail)
		for ; h != t; h++ {
			c := &r.cqes[h&r.cqMask]
			if r.inFlight == 0 {
				return errBroken
			}
			r.inFlight--
			done(c.userData, c.res)
		}
		atomic.StoreUint32(r.cqHead, h)
	}
	return nil
}

// File is one file of a ReadFiles batch.
type File struct {
	// Dir is the descriptor of the directory Name is in, and Name the
	// file's name there, NUL-terminated (see CString).
	Dir  int
	Name []byte
	// Buf is read into, from the file's start, up to its capacity. Name
	// and Buf must be on the heap (any slice from make or append of a
	// length not known at compile time is): the kernel writes Buf while
	// ReadFiles waits.
	Buf []byte

	// Stat is the file's status, taken through the open descriptor
	// before it was read.
	Stat unix.Stat_t
	// Data is what was read: Buf[:n]. Full reports that it filled Buf,
	// so the file may hold more.
	Data []byte
	Full bool
	// Err is the first error of opening, stating or reading the file.
	Err error
}

// CString returns s with a NUL byte appended, as File.Name wants it.
func CString(s string) []byte { return append([]byte(s), 0) }

// ReadFiles opens each file with flags (O_RDONLY and what else the caller
// wants, such as O_NOFOLLOW), stats it through the descriptor, reads it
// once the stat is done, and closes it: the opens, the reads and the
// closes of the whole batch, which must hold at most Entries()/2 files,
// in one submission each. The stats are system calls of their own: the
// ring runs every statx on a kernel worker thread, and a read linked
// after one with it, which cost a first build at 100,000 memories about
// a sixth of its CPU (a read on its own is served from the page cache as
// it is submitted). An error is returned only when the ring itself
// fails, and then it must be closed; each file's own failures are in its
// Err.
func (r *Ring) ReadFiles(files []File, flags int) error {
	if 2*len(files) > int(r.entries) {
		return fmt.Errorf("io_uring: a batch of %d files on a ring of %d entries", len(files), r.entries)
	}
	if len(r.fds) < len(files) {
		r.fds = make([]int32, r.entries/2)
	}
	fds := r.fds[:len(files)]
	for i := range files {
		f := &files[i]
		f.Data, f.Full, f.Err, f.Stat = nil, false, nil, unix.Stat_t{}
		fds[i] = -1
		if len(f.Name) == 0 || f.Name[len(f.Name)-1] != 0 {
			return errors.New("io_uring: a file name without its NUL")
		}
	}
	for i := range files {
		s := r.next()
		s.opcode, s.fd = opOpenat, int32(files[i].Dir)
		s.addr = uint64(uintptr(unsafe.Pointer(&files[i].Name[0])))
		s.opFlags = uint32(flags | unix.O_CLOEXEC)
		s.userData = uint64(i)
	}
	err := r.submitAndReap(func(u uint64, res int32) {
		if res < 0 {
			files[u].Err = fmt.Errorf("open: %w", syscall.Errno(-res))
			return
		}
		fds[u] = res
	})
	if err == nil {
		for i := range files {
			f := &files[i]
			if fds[i] < 0 {
				continue
			}
			if serr := unix.Fstat(int(fds[i]), &f.Stat); serr != nil {
				f.Err = fmt.Errorf("fstat: %w", serr)
				continue
			}
			s := r.next()
			s.opcode, s.fd = opRead, fds[i]
			if cap(f.Buf) > 0 {
				s.addr = uint64(uintptr(unsafe.Pointer(&f.Buf[:1][0])))
			}
			s.len = uint32(min(cap(f.Buf), 1<<30))
			s.userData = uint64(i)
		}
		err = r.submitAndReap(func(u uint64, res int32) {
			f := &files[u]
			if res < 0 {
				f.Err = fmt.Errorf("read: %w", syscall.Errno(-res))
				return
			}
			f.Data = f.Buf[:res]
			f.Full = int(res) == cap(f.Buf)
		})
	}
	// The kernel has read the names and written the buffers until here.
	runtime.KeepAlive(files)
	if cerr := r.closeAll(fds); err == nil {
		err = cerr
	}
	return err
}

// closeAll closes the descriptors that opened. Should the ring fail
// half-way, those it may have closed are left: closing one a second time
// could close another file given its number since.
func (r *Ring) closeAll(fds []int32) error {
	for i, fd := range fds {
		if fd >= 0 {
			s := r.next()
			s.opcode, s.fd, s.userData = opClose, fd, uint64(i)
		}
	}
	return r.submitAndReap(func(uint64, int32) {})
}
