/* kafkalog.native._append: the per-append work of a log's write path, in C.
 *
 * Two things, each with a plain-Python twin that stays the reference (and the fallback when
 * this module is not built, or KAFKALOG_NO_EXTENSIONS is set):
 *
 * - single_v2_batch(data, check_crc): the header of one whole v2 batch that a log may append
 *   without its general path, as (base_offset, last_offset, partition_leader_epoch,
 *   max_timestamp, records_count); or None when data is anything else: not a C-contiguous,
 *   one-dimensional buffer of single bytes (len(data) is then its size), shorter than a header,
 *   not magic 2, batchLength + 12 != len(data), a negative lastOffsetDelta, a producer id
 *   (idempotence needs the producer state), the transactional or control bit, or (with
 *   check_crc) a CRC-32C over attributes..end that differs from the stored one. None sends the
 *   caller to the general path, which raises the precise error. The CRC is the crc32c
 *   package's (the same function the Python twin calls), over a read-only memoryview of the
 *   bytes: nothing is copied. Twin: kafkalog.records.single_batch.single_v2_batch_py.
 *   Why in C: for a 16 KiB append the struct unpack of 13 fields, the checks, the two
 *   memoryviews and the CRC call cost more than a fifth of the append beside the pwrite.
 *
 * - reserve_blocks(fd, offset, length): fallocate(FALLOC_FL_KEEP_SIZE) of [offset,
 *   offset + length): disk blocks for the writes that follow, without changing the file's
 *   length (what readers, Kafka and copies see). 0 on success, else the errno (EOPNOTSUPP on a
 *   filesystem without it, ENOSPC, ...); ENOSYS where the platform has no fallocate. Twin:
 *   none needed, a segment without it simply does not reserve.
 *
 * - SegmentAppendState and append_v2_batch(state, data, check_crc, log_end_offset,
 *   max_bytes): the state a writable segment keeps per append (committed size, reserved end,
 *   bytes since the last index entry, the time rule's limit, the running max timestamp and
 *   the staged index entries) lives in this object, whose fields the Python segment reads and
 *   writes (kafkalog.segment_append_state: the same class in Python is the twin when the
 *   extension is absent). append_v2_batch is a log's whole per-append work for the common
 *   case, one call: the checks of single_v2_batch, the log's (at most max_bytes, within
 *   segment.bytes, base offset at or after the log end offset), the common case of Kafka's
 *   shouldRoll (no roll due), then the pwrite (GIL released), the size published after it,
 *   the running max timestamp, and the index entry the append earned, staged. It returns None
 *   BEFORE changing anything whenever the case is not that common one (an empty segment, a
 *   roll possibly due, blocks to reserve, an index entry that could not be staged, the max
 *   timestamp not loaded, ...): the caller then takes the Python path, which is the
 *   reference (tests/test_segment_append_state.py compares the files both write). Why in C:
 *   for a 16 KiB append the Python bookkeeping around the pwrite (five frames, the roll
 *   check, the index rule) cost ~5 us of ~27 us, and Kafka's write path is one method.
 *   With producer_ok true (a sixth argument) it takes the other single-batch case instead:
 *   one data batch of an idempotent or transactional producer (a producer id, not a control
 *   batch), which the caller's producer state has already validated (Log's
 *   _append_one_producer_batch); the state is updated by the caller after the write.
 *
 * single_v2_batch and reserve_blocks run with the GIL held (the pwrite they precede releases
 * it); append_v2_batch releases it around its pwrite, like os.pwrite.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first: its pyconfig.h defines _GNU_SOURCE (fallocate) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <structmember.h>

/* v2 batch header (DefaultRecordBatch): offsets of its fields */
#define V2_HEADER_SIZE 61
#define OFF_LENGTH 8
#define OFF_EPOCH 12
#define OFF_MAGIC 16
#define OFF_CRC 17
#define OFF_ATTRIBUTES 21
#define OFF_LAST_DELTA 23
#define OFF_MAX_TIMESTAMP 35
#define OFF_PRODUCER_ID 43
#define OFF_COUNT 57
#define ATTR_TXN_OR_CONTROL 0x30
#define ATTR_CONTROL 0x20

static PyObject *crc32c_func; /* crc32c.crc32c */

/* args[i] as a C long long into *out: 0, or -1 with the exception set (not an int, out of
 * range). The one conversion every function here does for its integer arguments. */
static inline int
arg_ll(PyObject *const *args, int i, long long *out)
{
    *out = PyLong_AsLongLong(args[i]);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static inline uint64_t
be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline uint32_t
be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* One whole v2 batch a log may append without its general path: one dimension of single
   bytes (the caller's len(data) is then the byte count), a whole header, magic 2, a
   batchLength covering exactly the bytes, a lastOffsetDelta that is not negative, no producer
   id (idempotence needs the producer state), neither transactional nor control; or, with
   producer_ok, a producer id and not control (the caller's producer state took it first). */
static int
plain_v2_batch(const Py_buffer *view, int producer_ok)
{
    const unsigned char *p = view->buf;
    Py_ssize_t n = view->len;
    if (view->ndim > 1 || view->itemsize != 1 || n < V2_HEADER_SIZE || p[OFF_MAGIC] != 2
        || (int64_t)(int32_t)be32(p + OFF_LENGTH) + 12 != (int64_t)n
        || (int32_t)be32(p + OFF_LAST_DELTA) < 0)
        return 0;
    if (producer_ok)
        return (int64_t)be64(p + OFF_PRODUCER_ID) >= 0
               && !(p[OFF_ATTRIBUTES + 1] & ATTR_CONTROL);
    return (int64_t)be64(p + OFF_PRODUCER_ID) == -1
           && !(p[OFF_ATTRIBUTES + 1] & ATTR_TXN_OR_CONTROL);
}

/* The buffer of obj when it is one plain_v2_batch: 1 with view filled (the caller releases
   it), else 0 with nothing held and no exception (not a contiguous buffer is the general
   path's error, not this one's). */
static int
get_plain_v2_batch(PyObject *obj, Py_buffer *view, int producer_ok)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (!plain_v2_batch(view, producer_ok)) {
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

/* 1 when the CRC-32C over attributes..end equals the stored one, 0 when not, -1 with an
   exception set. The crc32c package's function over a read-only memoryview of the caller's
   bytes, uncopied (released before we return: the crc32c call does not keep it). */
static int
crc_matches(const unsigned char *p, Py_ssize_t n)
{
    PyObject *mv = PyMemoryView_FromMemory((char *)p + OFF_ATTRIBUTES, n - OFF_ATTRIBUTES,
                                           PyBUF_READ);
    if (mv == NULL)
        return -1;
    PyObject *crc = PyObject_CallOneArg(crc32c_func, mv);
    Py_DECREF(mv);
    if (crc == NULL)
        return -1;
    unsigned long value = PyLong_AsUnsignedLong(crc);
    Py_DECREF(crc);
    if (value == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    return value == be32(p + OFF_CRC);
}

static PyObject *
single_v2_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "single_v2_batch(data, check_crc) takes 2 arguments");
        return NULL;
    }
    int check_crc = PyObject_IsTrue(args[1]);
    if (check_crc < 0)
        return NULL;
    Py_buffer view;
    if (!get_plain_v2_batch(args[0], &view, 0))
        Py_RETURN_NONE;
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len;
    PyObject *result = NULL;
    if (check_crc) {
        int ok = crc_matches(p, n);
        if (ok < 0)
            goto done;
        if (!ok)
            goto none;
    }
    {
        int64_t base = (int64_t)be64(p);
        result = Py_BuildValue("(LLiLi)", (long long)base,
                               (long long)(base + (int32_t)be32(p + OFF_LAST_DELTA)),
                               (int)(int32_t)be32(p + OFF_EPOCH),
                               (long long)(int64_t)be64(p + OFF_MAX_TIMESTAMP),
                               (int)(int32_t)be32(p + OFF_COUNT));
    }
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return result;
}

static PyObject *
reserve_blocks(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "reserve_blocks(fd, offset, length) takes 3 arguments");
        return NULL;
    }
    long fd_long = PyLong_AsLong(args[0]);
    if (fd_long == -1 && PyErr_Occurred())
        return NULL;
    if (fd_long < 0 || fd_long > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "reserve_blocks: bad file descriptor %ld", fd_long);
        return NULL;
    }
    int fd = (int)fd_long;
    long long offset, length;
    if (arg_ll(args, 1, &offset) < 0 || arg_ll(args, 2, &length) < 0)
        return NULL;
    if (offset < 0 || length <= 0) {
        PyErr_Format(PyExc_ValueError,
                     "reserve_blocks: expected offset >= 0 and length > 0, found %lld and %lld",
                     offset, length);
        return NULL;
    }
#if defined(__linux__) && defined(FALLOC_FL_KEEP_SIZE)
    int rc, err = 0;
    do {
        rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
        err = rc == 0 ? 0 : errno;
    } while (err == EINTR);
    return PyLong_FromLong(err);
#else
    return PyLong_FromLong(ENOSYS);
#endif
}

/* ---- SegmentAppendState ------------------------------------------------------------------
 * Invariants (kept by the Python segment, which owns every field; see
 * kafkalog/segment_append_state.py for each one's meaning):
 * - size: committed bytes of the .log (whole batches); published after their write.
 * - staged[0 .. 4 * staged_n): (offset, position, max timestamp, its offset) per index entry
 *   earned and not yet written; staged_n <= capacity. Allocated when an entry is staged and
 *   freed when they are taken (staged NULL, staged_n 0): a log directory holds many segments,
 *   of which only the active ones stage.
 * - room > 0 means neither index is full even with every staged entry written.
 * - max_loaded == 0: max_timestamp/max_timestamp_offset are not known (not loaded yet). */
typedef struct {
    PyObject_HEAD
    long long fd; /* the writable .log, or -1 (closed, read-only): no append */
    long long base_offset;
    long long size;
    long long reserved_end;
    long long segment_bytes;
    long long bytes_since_index;
    long long index_interval;
    long long roll_after_timestamp;
    long long max_timestamp;
    long long max_timestamp_offset;
    long long max_loaded;
    long long room;
    long long last_offset;
    Py_ssize_t staged_n;
    Py_ssize_t capacity;
    int64_t *staged;
} AppendState;

/* The slot of the next staged entry (staged_n < capacity checked by the caller), or NULL
   when its memory cannot be had (no exception set). */
static int64_t *
next_stage_slot(AppendState *st)
{
    if (st->staged == NULL) {
        st->staged = PyMem_Malloc((size_t)st->capacity * 4 * sizeof(int64_t));
        if (st->staged == NULL)
            return NULL;
    }
    return st->staged + 4 * st->staged_n;
}

static PyTypeObject AppendStateType;

static PyObject *
state_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    Py_ssize_t capacity;
    static char *kwlist[] = {"capacity", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n", kwlist, &capacity))
        return NULL;
    /* (0: nothing is ever staged, every entry is written at once) */
    if (capacity < 0 || capacity > (1 << 20)) {
        PyErr_Format(PyExc_ValueError, "SegmentAppendState: capacity must be in 0..%d, found %zd",
                     1 << 20, capacity);
        return NULL;
    }
    AppendState *st = (AppendState *)type->tp_alloc(type, 0);
    if (st == NULL)
        return NULL;
    st->capacity = capacity;
    st->fd = -1;
    st->roll_after_timestamp = LLONG_MIN;
    st->max_timestamp = -1;
    st->max_timestamp_offset = -1;
    st->last_offset = LLONG_MIN;
    return (PyObject *)st;
}

static void
state_dealloc(AppendState *st)
{
    PyMem_Free(st->staged);
    Py_TYPE(st)->tp_free((PyObject *)st);
}

static PyObject *
state_stage(AppendState *st, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "stage(offset, position, timestamp, timestamp_offset) takes 4 arguments");
        return NULL;
    }
    int64_t v[4];
    for (int i = 0; i < 4; i++) {
        long long x;
        if (arg_ll(args, i, &x) < 0)
            return NULL;
        v[i] = (int64_t)x;
    }
    if (st->staged_n >= st->capacity) {
        PyErr_Format(PyExc_RuntimeError, "stage: %zd entries already staged (the capacity)",
                     st->staged_n);
        return NULL;
    }
    int64_t *slot = next_stage_slot(st);
    if (slot == NULL)
        return PyErr_NoMemory();
    memcpy(slot, v, sizeof v);
    st->staged_n++;
    Py_RETURN_NONE;
}

static PyObject *
state_staged_count(AppendState *st, PyObject *unused)
{
    return PyLong_FromSsize_t(st->staged_n);
}

static PyObject *
state_take_staged(AppendState *st, PyObject *unused)
{
    /* all staged entries as native int64 bytes, and none staged after (one step under the
       GIL: an append in another thread stages before or after, never in between) */
    PyObject *b = PyBytes_FromStringAndSize((const char *)st->staged,
                                            st->staged_n * 4 * (Py_ssize_t)sizeof(int64_t));
    if (b != NULL) {
        st->staged_n = 0;
        PyMem_Free(st->staged);
        st->staged = NULL;
    }
    return b;
}

static PyMethodDef state_methods[] = {
    {"stage", (PyCFunction)(void (*)(void))state_stage, METH_FASTCALL,
     "stage(offset, position, timestamp, timestamp_offset): add one index entry (room and "
     "last_offset are the caller's to update)."},
    {"staged_count", (PyCFunction)state_staged_count, METH_NOARGS,
     "staged_count() -> how many entries are staged."},
    {"take_staged", (PyCFunction)state_take_staged, METH_NOARGS,
     "take_staged() -> bytes: every staged entry as 4 native int64 each; none staged after."},
    {NULL, NULL, 0, NULL},
};

#define STATE_MEMBER(name) {#name, T_LONGLONG, offsetof(AppendState, name), 0, NULL}
static PyMemberDef state_members[] = {
    STATE_MEMBER(fd),
    STATE_MEMBER(base_offset),
    STATE_MEMBER(size),
    STATE_MEMBER(reserved_end),
    STATE_MEMBER(segment_bytes),
    STATE_MEMBER(bytes_since_index),
    STATE_MEMBER(index_interval),
    STATE_MEMBER(roll_after_timestamp),
    STATE_MEMBER(max_timestamp),
    STATE_MEMBER(max_timestamp_offset),
    STATE_MEMBER(max_loaded),
    STATE_MEMBER(room),
    STATE_MEMBER(last_offset),
    {"capacity", T_PYSSIZET, offsetof(AppendState, capacity), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject AppendStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkalog.native._append.SegmentAppendState",
    .tp_basicsize = sizeof(AppendState),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SegmentAppendState(capacity): a writable segment's per-append state (see "
              "kafkalog.segment_append_state).",
    .tp_new = state_new,
    .tp_dealloc = (destructor)state_dealloc,
    .tp_methods = state_methods,
    .tp_members = state_members,
};

static PyObject *
append_v2_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 && nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "append_v2_batch(state, data, check_crc, "
                                         "log_end_offset, max_bytes[, producer_ok]) takes 5 or "
                                         "6 arguments");
        return NULL;
    }
    int producer_ok = 0;
    if (nargs == 6 && (producer_ok = PyObject_IsTrue(args[5])) < 0)
        return NULL;
    if (!PyObject_TypeCheck(args[0], &AppendStateType)) {
        PyErr_SetString(PyExc_TypeError, "append_v2_batch: state must be a SegmentAppendState");
        return NULL;
    }
    AppendState *st = (AppendState *)args[0];
    int check_crc = PyObject_IsTrue(args[2]);
    if (check_crc < 0)
        return NULL;
    long long log_end_offset, max_bytes;
    if (arg_ll(args, 3, &log_end_offset) < 0 || arg_ll(args, 4, &max_bytes) < 0)
        return NULL;
    Py_buffer view;
    if (!get_plain_v2_batch(args[1], &view, producer_ok))
        Py_RETURN_NONE;
    const unsigned char *p = view.buf;
    long long n = view.len;
    PyObject *result = NULL;
    long long base = (long long)be64(p);
    long long last = base + (int32_t)be32(p + OFF_LAST_DELTA);
    long long max_ts = (long long)(int64_t)be64(p + OFF_MAX_TIMESTAMP);
    long long position = st->size;
    long long relative = last - st->base_offset;
    /* Everything below returns None with nothing changed, for the Python path to decide:
     * - the log's checks (_fits_one_batch): at most max_bytes, within segment.bytes, base
     *   offset at or after the log end offset; a segment that takes appends (fd >= 0);
     * - an empty segment (its first append sets the time rule's start) or a running max
     *   timestamp not loaded;
     * - the common case of Kafka's shouldRoll not met (LogSegment.should_roll_positional's
     *   first test: fits segment.bytes, max timestamp within the time rule's limit, room to
     *   stage an index entry, last offset indexable): a roll may be due;
     * - blocks to reserve (LogSegment._reserve);
     * - an index entry due whose offset is not above the last one (the index raises). */
    if (st->fd < 0 || n > max_bytes || n > st->segment_bytes || base < log_end_offset
        || position == 0 || !st->max_loaded
        || position > st->segment_bytes - n || max_ts > st->roll_after_timestamp
        || st->room <= 0 || relative < 0 || relative > INT32_MAX
        || position + n > st->reserved_end
        || (st->bytes_since_index > st->index_interval && last <= st->last_offset))
        goto none;
    if (check_crc) {
        int ok = crc_matches(p, n);
        if (ok < 0)
            goto done;
        if (!ok)
            goto none;
    }
    int fd = (int)st->fd;
    long long written = 0;
    while (written < n) {
        ssize_t w;
        int err;
        Py_BEGIN_ALLOW_THREADS
        w = pwrite(fd, p + written, (size_t)(n - written), (off_t)(position + written));
        err = errno;
        Py_END_ALLOW_THREADS
        if (w < 0) {
            if (err == EINTR) { /* as os.pwrite: run the signal handlers, then retry */
                if (PyErr_CheckSignals() < 0)
                    goto done;
                continue;
            }
            errno = err;
            PyErr_SetFromErrno(PyExc_OSError);
            goto done; /* the size is not moved: nothing of this append is committed */
        }
        if (w == 0) {
            PyErr_Format(PyExc_OSError, "short write at position %lld", position + written);
            goto done;
        }
        written += w;
    }
    /* publish: the bytes are in the page cache before readers can see the new size */
    st->size = position + n;
    long long shallow = max_ts >= 0 ? last : -1;
    if (st->max_loaded && max_ts > st->max_timestamp) {
        st->max_timestamp = max_ts;
        st->max_timestamp_offset = shallow;
    }
    long long pending = -1;
    if (st->bytes_since_index > st->index_interval) {
        /* read again after the pwrite (a reader thread may have written the staged entries
           meanwhile, leaving room 0): staged if it still may be, else (or without memory
           for it) the caller writes it */
        int64_t *e = NULL;
        if (st->room > 0 && last > st->last_offset && st->max_loaded
            && st->staged_n < st->capacity && (e = next_stage_slot(st)) != NULL) {
            e[0] = last;
            e[1] = position;
            e[2] = st->max_timestamp;
            e[3] = st->max_timestamp_offset;
            st->staged_n++;
            st->last_offset = last;
            st->room--;
        }
        else
            pending = position;
        st->bytes_since_index = n;
    }
    else
        st->bytes_since_index += n;
    result = Py_BuildValue("(LLiLiL)", base, last, (int)(int32_t)be32(p + OFF_EPOCH), max_ts,
                           (int)(int32_t)be32(p + OFF_COUNT), pending);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"single_v2_batch", (PyCFunction)(void (*)(void))single_v2_batch, METH_FASTCALL,
     "single_v2_batch(data, check_crc) -> (base_offset, last_offset, partition_leader_epoch, "
     "max_timestamp, records_count) of one whole v2 batch a log may append on its fast path, "
     "or None (see the source's opening comment)."},
    {"reserve_blocks", (PyCFunction)(void (*)(void))reserve_blocks, METH_FASTCALL,
     "reserve_blocks(fd, offset, length) -> errno: fallocate(FALLOC_FL_KEEP_SIZE); 0 on "
     "success."},
    {"append_v2_batch", (PyCFunction)(void (*)(void))append_v2_batch, METH_FASTCALL,
     "append_v2_batch(state, data, check_crc, log_end_offset, max_bytes) -> (base_offset, "
     "last_offset, partition_leader_epoch, max_timestamp, records_count, pending_position) "
     "after appending one whole v2 batch to the segment whose SegmentAppendState this is, or "
     "None with nothing done (see the source's opening comment). pending_position >= 0: the "
     "index entry the append earned at that position could not be staged; the caller writes "
     "it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "kafkalog.native._append",
    "Per-append work of a log's write path, in C (see the source's opening comment).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__append(void)
{
    PyObject *crc_module = PyImport_ImportModule("crc32c");
    if (crc_module == NULL)
        return NULL;
    crc32c_func = PyObject_GetAttrString(crc_module, "crc32c");
    Py_DECREF(crc_module);
    if (crc32c_func == NULL)
        return NULL;
    if (PyType_Ready(&AppendStateType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "SegmentAppendState", (PyObject *)&AppendStateType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
