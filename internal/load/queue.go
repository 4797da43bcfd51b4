package load

// queue is a first-in first-out ring that grows as needed and never shrinks: the event loop's
// queues reach their size in the first second and then allocate nothing.
type queue[T any] struct {
	items      []T
	head, size int
}

func (q *queue[T]) len() int { return q.size }

func (q *queue[T]) push(v T) {
	if q.size == len(q.items) {
		q.grow()
	}
	q.items[(q.head+q.size)%len(q.items)] = v
	q.size++
}

// pushFront puts v first, to be popped next.
func (q *queue[T]) pushFront(v T) {
	if q.size == len(q.items) {
		q.grow()
	}
	q.head = (q.head - 1 + len(q.items)) % len(q.items)
	q.items[q.head] = v
	q.size++
}

// peek is the first item; the queue must not be empty.
func (q *queue[T]) peek() T { return q.items[q.head] }

// at is the item i places from the first; i must be below len.
func (q *queue[T]) at(i int) T { return q.items[(q.head+i)%len(q.items)] }

func (q *queue[T]) pop() T {
	v := q.items[q.head]
	var zero T
	q.items[q.head] = zero
	q.head = (q.head + 1) % len(q.items)
	q.size--
	return v
}

func (q *queue[T]) clear() {
	for q.size > 0 {
		q.pop()
	}
	q.head = 0
}

func (q *queue[T]) grow() {
	items := make([]T, max(16, 2*len(q.items)))
	for i := range q.size {
		items[i] = q.items[(q.head+i)%len(q.items)]
	}
	q.items, q.head = items, 0
}
