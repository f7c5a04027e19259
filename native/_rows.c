/* kafkalog.native._rows: the per-record Python work of the row path, in C.
 *
 * Two things only, each with a plain-Python twin that stays the reference (and the fallback
 * when this module is not built, or KAFKALOG_NO_EXTENSIONS is set):
 *
 * - record_vectorcall: Record(key, value, timestamp=None, headers=(), offset=None) without
 *   running Record.__new__ (a Python function: its call costs more than aiokafka's whole
 *   per-record append). install_record_constructor(Record) sets it as the class's vectorcall.
 *   Same object as __new__ makes; any call it does not handle (wrong arity, unknown or
 *   repeated keyword, a missing key/value) goes to type.__call__ and so to __new__, which
 *   raises exactly as before. Its partner record_dealloc keeps up to RECORD_FREELIST_MAX
 *   freed Records for the next ones built.
 *
 * - encode_records(records, default_timestamp, header_room): the records area of one v2 batch
 *   (every record written as Kafka's DefaultRecord.writeTo), after header_room zero bytes, in
 *   a bytearray of exactly that size, with the record count and the first and largest
 *   timestamps. Two passes over the records: the first checks each one and sizes it exactly,
 *   the second writes it; keys, values and headers are copied once, from the bytes objects
 *   into the output. None when a record is anything the row path does not handle as
 *   encode_batch's Python path would (not a tuple, a key/value that is not bytes or None, a
 *   timestamp that is not an int64, headers that are not a tuple/list of (str, bytes|None)
 *   pairs, a header key that is not valid UTF-8, an explicit offset, a timestamp whose delta
 *   to the first one leaves int64, a length or record above int32): the caller then runs
 *   the Python path, which encodes or raises as it always has. Its twin and reference is
 *   kafkalog.records.builder._encode_records_py (flattening + the columnar encode kernel of
 *   native/records_encode.py).
 *
 * Both run with the GIL held from start to end and call no Python code while they read the
 * records (borrowed references stay valid).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *empty_tuple;
static PyObject *field_names[5];
static PyObject *record_class; /* the class the constructor was installed on (a reference) */

/* Freed Records of the exact class, kept for the next ones built (as tuple keeps its own
 * free lists): code that builds a batch of records, appends it and drops it builds the next
 * batch from the same memory, without the allocator and without counting towards the
 * collector's next pass (measured: a fifth of the constructor's cost). Every object here has
 * refcount 0, is untracked, holds no items and no reference to its type. Not where the GIL
 * does not guard it (free-threaded builds), nor past the versions whose public headers declare
 * _Py_NewReference (3.10 to 3.13, checked). */
#if PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#define RECORD_FREELIST_MAX 4096
static PyObject *record_freelist[RECORD_FREELIST_MAX];
static int record_numfree;
#else
#define RECORD_FREELIST_MAX 0
#endif

/* -- Record construction ------------------------------------------------------------------- */

static PyObject *
slow_call(PyObject *type, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* type.__call__ -> Record.__new__ (its own errors) */
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(tuple, i, args[i]);
    }
    PyObject *kwargs = NULL;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        kwargs = PyDict_New();
        if (kwargs == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kwnames); j++) {
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, j), args[nargs + j]) < 0) {
                Py_DECREF(tuple);
                Py_DECREF(kwargs);
                return NULL;
            }
        }
    }
    PyObject *result = PyType_Type.tp_call(type, tuple, kwargs);
    Py_DECREF(tuple);
    Py_XDECREF(kwargs);
    return result;
}

static int
field_index(PyObject *name)
{
    for (int i = 0; i < 5; i++)
        if (name == field_names[i])
            return i;
    for (int i = 0; i < 5; i++)
        if (PyUnicode_Check(name) && PyUnicode_Compare(name, field_names[i]) == 0)
            return i;
    if (PyErr_Occurred())
        PyErr_Clear();
    return -1;
}

static PyObject *
record_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *v[5] = {NULL, NULL, Py_None, empty_tuple, Py_None};
    int given[5] = {0, 0, 0, 0, 0};
    /* a subclass that inherited this slot (Python versions differ) has its own __new__ */
    if (nargs > 5 || type != record_class)
        return slow_call(type, args, nargs, kwnames);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        v[i] = args[i];
        given[i] = 1;
    }
    if (kwnames != NULL) {
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(kwnames); j++) {
            int k = field_index(PyTuple_GET_ITEM(kwnames, j));
            if (k < 0 || given[k])
                return slow_call(type, args, nargs, kwnames);
            v[k] = args[nargs + j];
            given[k] = 1;
        }
    }
    if (!given[0] || !given[1])
        return slow_call(type, args, nargs, kwnames);
    PyObject *headers = v[3];
    if (PyTuple_CheckExact(headers)) {
        Py_INCREF(headers);
    } else if (headers == Py_None) {
        headers = empty_tuple;
        Py_INCREF(headers);
    } else {
        headers = PySequence_Tuple(headers); /* tuple(headers): its errors, as __new__ */
        if (headers == NULL)
            return NULL;
    }
    /* allocated untracked (PyType_GenericAlloc would zero it, track it, and this would
     * untrack it again: measured, a third of the constructor's cost) */
    PyObject *self;
#if RECORD_FREELIST_MAX > 0
    if (record_numfree > 0) {
        self = record_freelist[--record_numfree];
        Py_INCREF(type); /* as PyObject_Init does for an instance of a heap type */
        _Py_NewReference(self);
    } else
#endif
    {
        self = (PyObject *)PyObject_GC_NewVar(PyTupleObject, (PyTypeObject *)type, 5);
        if (self == NULL) {
            Py_DECREF(headers);
            return NULL;
        }
    }
    int atomic = 1;
    for (int i = 0; i < 5; i++) {
        PyObject *x = i == 3 ? headers : v[i];
        if (i != 3)
            Py_INCREF(x);
        PyTuple_SET_ITEM(self, i, x);
        /* (PyObject_IS_GC inlined: bytes, int and None answer from their type's flags) */
        if (PyType_IS_GC(Py_TYPE(x))
            && (Py_TYPE(x)->tp_is_gc == NULL || Py_TYPE(x)->tp_is_gc(x))
            && (!PyTuple_CheckExact(x) || PyObject_GC_IsTracked(x)))
            atomic = 0;
    }
    /* A record of bytes, ints and None (no headers, or headers the GC does not track) can be
     * in no reference cycle: it stays untracked, as the collector would untrack such a tuple
     * at its first pass (_PyTuple_MaybeUntrack). Otherwise every batch of records built would
     * be promoted and walked by the collector's older generations: measured, that made
     * building records several times slower than encoding them. (Record has __slots__ = ():
     * its instances hold nothing else; only this exact class gets here.) */
    if (!atomic)
        PyObject_GC_Track(self);
    return self;
}

/* Record's tp_dealloc: what subtype_dealloc ends up doing for a Record (no __dict__, no
 * weakrefs, no finalizer: __slots__ = ()), without its generic checks, which cost as much as
 * the constructor (measured). A subclass's own subtype_dealloc calls this as its base
 * dealloc after clearing what it added; either way the type reference is released here, as
 * a heap base type's dealloc must. */
static void
record_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, record_dealloc)
    for (Py_ssize_t i = Py_SIZE(self); --i >= 0;)
        Py_XDECREF(PyTuple_GET_ITEM(self, i));
#if RECORD_FREELIST_MAX > 0
    /* (only the exact class: a subclass's instance may be larger, and its memory is its own) */
    if ((PyObject *)tp == record_class && Py_SIZE(self) == 5
        && record_numfree < RECORD_FREELIST_MAX) {
        for (int i = 0; i < 5; i++)
            PyTuple_SET_ITEM(self, i, NULL);
        record_freelist[record_numfree++] = self;
    } else
#endif
        PyObject_GC_Del(self);
    Py_DECREF(tp); /* (inside: a dealloc the trashcan defers runs this function again later) */
    Py_TRASHCAN_END
}

static PyObject *
install_record_constructor(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "expected a tuple subclass");
        return NULL;
    }
    if (record_class != NULL && record_class != cls) {
        PyErr_SetString(PyExc_RuntimeError, "the constructor is installed on another class");
        return NULL;
    }
    Py_INCREF(cls);
    Py_XDECREF(record_class);
    record_class = cls;
    ((PyTypeObject *)cls)->tp_vectorcall = record_vectorcall;
    ((PyTypeObject *)cls)->tp_dealloc = record_dealloc;
    Py_RETURN_NONE;
}

/* -- flatten ------------------------------------------------------------------------------- */

/* one header pair (tuple or list of 2): key as UTF-8, value bytes or None; 0 = unsupported */
static int
header_parts(PyObject *h, const char **key, Py_ssize_t *klen, PyObject **value)
{
    PyObject *k, *val;
    if (PyTuple_Check(h) && PyTuple_GET_SIZE(h) == 2) {
        k = PyTuple_GET_ITEM(h, 0);
        val = PyTuple_GET_ITEM(h, 1);
    } else if (PyList_Check(h) && PyList_GET_SIZE(h) == 2) {
        k = PyList_GET_ITEM(h, 0);
        val = PyList_GET_ITEM(h, 1);
    } else {
        return 0;
    }
    /* exactly str: a subclass may override encode(), which the per-record path calls */
    if (!PyUnicode_CheckExact(k) || (val != Py_None && !PyBytes_Check(val)))
        return 0;
    *key = PyUnicode_AsUTF8AndSize(k, klen);
    if (*key == NULL) { /* lone surrogates: str.encode raises in the Python path */
        PyErr_Clear();
        return 0;
    }
    *value = val;
    return 1;
}

/* the items of a list or tuple (borrowed; an empty list may have none allocated); 0 when
 * seq is neither */
static int
seq_items(PyObject *seq, PyObject ***items, Py_ssize_t *n)
{
    if (PyList_Check(seq)) {
        *n = PyList_GET_SIZE(seq);
        *items = ((PyListObject *)seq)->ob_item;
        return 1;
    }
    if (PyTuple_Check(seq)) {
        *n = PyTuple_GET_SIZE(seq);
        *items = ((PyTupleObject *)seq)->ob_item;
        return 1;
    }
    return 0;
}

/* Kafka's zigzag varint / varlong (ByteUtils.writeVarint / writeVarlong): the zigzag value,
 * then 7 bits per byte, low first */
static inline uint64_t
zigzag32(int32_t v)
{
    return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

static inline uint64_t
zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int
uvarint_size(uint64_t z)
{
    int n = 1;
    while (z >= 0x80) {
        z >>= 7;
        n++;
    }
    return n;
}

static inline unsigned char *
put_uvarint(unsigned char *p, uint64_t z)
{
    while (z >= 0x80) {
        *p++ = (unsigned char)(z | 0x80);
        z >>= 7;
    }
    *p++ = (unsigned char)z;
    return p;
}

#define varint_size(v) uvarint_size(zigzag32(v))
#define varlong_size(v) uvarint_size(zigzag64(v))
#define put_varint(p, v) put_uvarint((p), zigzag32(v))
#define put_varlong(p, v) put_uvarint((p), zigzag64(v))

/* bytes of an optional field: varint length + data, or varint -1 (one byte) for None */
static inline int64_t
field_size(PyObject *b)
{
    if (b == Py_None)
        return 1;
    Py_ssize_t len = PyBytes_GET_SIZE(b);
    return varint_size((int32_t)len) + len;
}

static inline unsigned char *
put_field(unsigned char *p, PyObject *b)
{
    if (b == Py_None) {
        *p++ = 1; /* varint -1: null */
        return p;
    }
    Py_ssize_t len = PyBytes_GET_SIZE(b);
    p = put_varint(p, (int32_t)len);
    memcpy(p, PyBytes_AS_STRING(b), len);
    return p + len;
}

#define INT32_LIMIT 2147483647LL

/* the record's timestamp (default_ts for None); 0 = not a tuple of 2..5 the row path takes */
static int
record_timestamp(PyObject *r, long long default_ts, long long *ts)
{
    *ts = default_ts;
    if (PyTuple_GET_SIZE(r) > 2) {
        PyObject *t = PyTuple_GET_ITEM(r, 2);
        if (t != Py_None) {
            int overflow;
            if (!PyLong_Check(t))
                return 0;
            *ts = PyLong_AsLongLongAndOverflow(t, &overflow);
            if (overflow)
                return 0;
        }
    }
    return 1;
}

/* encode_records(records, default_timestamp, header_room): see the module docstring */
static PyObject *
encode_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError,
                        "encode_records(records, default_timestamp, header_room)");
        return NULL;
    }
    PyObject *records = args[0];
    long long default_ts = PyLong_AsLongLong(args[1]);
    if (default_ts == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t header_room = PyLong_AsSsize_t(args[2]);
    if (header_room == -1 && PyErr_Occurred())
        return NULL;
    if (header_room < 0) {
        PyErr_SetString(PyExc_ValueError, "header_room must be >= 0");
        return NULL;
    }
    Py_ssize_t n;
    PyObject **items;
    if (!seq_items(records, &items, &n) || n == 0 || n > INT32_LIMIT)
        Py_RETURN_NONE;
    long long first_ts = 0, max_ts = -1;
    int64_t total = header_room;
    /* what pass 1 learns of each record, for pass 2: its timestamp and its size */
    struct sized { long long ts; int64_t body; } *sized = PyMem_Malloc(n * sizeof(*sized));
    if (sized == NULL)
        return PyErr_NoMemory();
    /* pass 1: check every record as the Python path would accept it, size it exactly */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = items[i];
        if (!PyTuple_Check(r))
            goto python_path;
        Py_ssize_t m = PyTuple_GET_SIZE(r);
        if (m < 2 || m > 5)
            goto python_path;
        PyObject *key = PyTuple_GET_ITEM(r, 0), *value = PyTuple_GET_ITEM(r, 1);
        if ((key != Py_None && (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) > INT32_LIMIT))
            || (value != Py_None
                && (!PyBytes_Check(value) || PyBytes_GET_SIZE(value) > INT32_LIMIT)))
            goto python_path;
        long long ts, delta;
        if (!record_timestamp(r, default_ts, &ts))
            goto python_path;
        if (i == 0)
            first_ts = ts;
        /* a timestampDelta outside int64: the per-record path raises for it */
        if (__builtin_sub_overflow(ts, first_ts, &delta))
            goto python_path;
        if (ts > max_ts)
            max_ts = ts;
        int64_t body = 1 + varlong_size(delta) + varint_size((int32_t)i) + field_size(key)
                       + field_size(value);
        Py_ssize_t nh = 0;
        if (m > 3) {
            PyObject *hs = PyTuple_GET_ITEM(r, 3);
            if (hs != Py_None) {
                PyObject **hitems;
                if (!seq_items(hs, &hitems, &nh) || nh > INT32_LIMIT)
                    goto python_path;
                for (Py_ssize_t j = 0; j < nh; j++) {
                    const char *hk;
                    Py_ssize_t hkl;
                    PyObject *hv;
                    if (!header_parts(hitems[j], &hk, &hkl, &hv) || hkl > INT32_LIMIT
                        || (hv != Py_None && PyBytes_GET_SIZE(hv) > INT32_LIMIT))
                        goto python_path;
                    body += varint_size((int32_t)hkl) + hkl + field_size(hv);
                    if (body > INT32_LIMIT)
                        goto python_path;
                }
            }
        }
        body += varint_size((int32_t)nh);
        if (body > INT32_LIMIT)
            goto python_path; /* the per-record path raises for it */
        if (m > 4 && PyTuple_GET_ITEM(r, 4) != Py_None)
            goto python_path; /* explicit offsets: the Python path */
        total += varint_size((int32_t)body) + body;
        if (total > PY_SSIZE_T_MAX / 2)
            goto python_path;
        sized[i].ts = ts;
        sized[i].body = body;
    }
    PyObject *out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out == NULL) {
        PyMem_Free(sized);
        return NULL;
    }
    unsigned char *base = (unsigned char *)PyByteArray_AS_STRING(out);
    memset(base, 0, header_room);
    unsigned char *p = base + header_room;
    /* pass 2: write (every record was checked above; no Python code runs in between) */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = items[i];
        Py_ssize_t m = PyTuple_GET_SIZE(r);
        PyObject *key = PyTuple_GET_ITEM(r, 0), *value = PyTuple_GET_ITEM(r, 1);
        int64_t delta = sized[i].ts - first_ts;
        PyObject *hs = m > 3 ? PyTuple_GET_ITEM(r, 3) : Py_None;
        PyObject **hitems = NULL;
        Py_ssize_t nh = 0;
        if (hs != Py_None)
            seq_items(hs, &hitems, &nh);
        p = put_varint(p, (int32_t)sized[i].body);
        *p++ = 0; /* record attributes: unused */
        p = put_varlong(p, delta);
        p = put_varint(p, (int32_t)i);
        p = put_field(p, key);
        p = put_field(p, value);
        p = put_varint(p, (int32_t)nh);
        for (Py_ssize_t j = 0; j < nh; j++) {
            const char *hk;
            Py_ssize_t hkl;
            PyObject *hv;
            header_parts(hitems[j], &hk, &hkl, &hv);
            p = put_varint(p, (int32_t)hkl);
            memcpy(p, hk, hkl);
            p += hkl;
            p = put_field(p, hv);
        }
    }
    PyMem_Free(sized);
    if (p != base + total) { /* cannot happen: pass 2 writes what pass 1 sized */
        Py_DECREF(out);
        PyErr_SetString(PyExc_SystemError, "encode_records: size mismatch");
        return NULL;
    }
    return Py_BuildValue("(NnLL)", out, n, first_ts, max_ts);

python_path:
    PyMem_Free(sized);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"install_record_constructor", install_record_constructor, METH_O,
     "install_record_constructor(cls): construct cls(key, value, timestamp=None, headers=(), "
     "offset=None) in C (cls.__new__ still handles every call shape it does not)."},
    {"encode_records", (PyCFunction)(void (*)(void))encode_records, METH_FASTCALL,
     "encode_records(records, default_timestamp, header_room) -> (bytearray, n, "
     "first_timestamp, max_timestamp): header_room zero bytes then the records area of one "
     "v2 batch; or None when a record needs the Python path."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "kafkalog.native._rows",
    "Per-record Python work of the row path, in C (see the source's opening comment).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__rows(void)
{
    static const char *names[5] = {"key", "value", "timestamp", "headers", "offset"};
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL)
        return NULL;
    for (int i = 0; i < 5; i++) {
        field_names[i] = PyUnicode_InternFromString(names[i]);
        if (field_names[i] == NULL)
            return NULL;
    }
    return PyModule_Create(&module_def);
}
