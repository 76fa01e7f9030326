package ui

// links are what a node of the parsed document (a block or an inline)
// holds of its place in the tree.
type links[T any] struct {
	parent, first, last, prev, next *T
}

func (l *links[T]) tree() *links[T] { return l }

// treeNode is a pointer to a node that embeds its links.
type treeNode[T any] interface {
	*T
	tree() *links[T]
}

// appendChild makes c the last child of parent.
func appendChild[T any, P treeNode[T]](parent, c P) {
	pl, cl := parent.tree(), c.tree()
	cl.parent = (*T)(parent)
	if pl.last == nil {
		pl.first = (*T)(c)
	} else {
		P(pl.last).tree().next = (*T)(c)
		cl.prev = pl.last
	}
	pl.last = (*T)(c)
}

// unlink takes n out of its parent's children.
func unlink[T any, P treeNode[T]](n P) {
	l := n.tree()
	if l.prev != nil {
		P(l.prev).tree().next = l.next
	} else if l.parent != nil {
		P(l.parent).tree().first = l.next
	}
	if l.next != nil {
		P(l.next).tree().prev = l.prev
	} else if l.parent != nil {
		P(l.parent).tree().last = l.prev
	}
	l.parent, l.prev, l.next = nil, nil, nil
}

// insertAfter puts c just after n, under n's parent.
func insertAfter[T any, P treeNode[T]](n, c P) {
	nl, cl := n.tree(), c.tree()
	cl.parent, cl.prev, cl.next = nl.parent, (*T)(n), nl.next
	if nl.next != nil {
		P(nl.next).tree().prev = (*T)(c)
	} else if nl.parent != nil {
		P(nl.parent).tree().last = (*T)(c)
	}
	nl.next = (*T)(c)
}

// adoptFollowing moves the siblings after n, up to stop (or all of them
// when stop is nil), to the end of parent's children.
func adoptFollowing[T any, P treeNode[T]](parent, n, stop P) {
	for c := P(n.tree().next); c != nil && c != stop; {
		next := P(c.tree().next)
		unlink(c)
		appendChild(parent, c)
		c = next
	}
}
