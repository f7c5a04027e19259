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
 *   raises exactly as before.
 *
 * - flatten(records, default_timestamp): the keys, values, timestamps and headers of a list of records as flat
 *   buffers (Arrow-style data + offsets + validity), what the columnar encode kernel
 *   (native/records_encode.py) takes. None when a record is anything the columnar path does
 *   not handle as encode_batch's Python path would (not a tuple, a key/value that is not
 *   bytes or None, a timestamp that is not an int64, headers that are not a tuple/list of
 *   (str, bytes|None) pairs, a header key that is not valid UTF-8, an explicit offset, a
 *   timestamp whose delta to the first one leaves int64): the
 *   caller then runs the Python path, which encodes or raises as it always has.
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
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *self = tp->tp_alloc(tp, 5);
    if (self == NULL) {
        Py_DECREF(headers);
        return NULL;
    }
    int atomic = 1;
    for (int i = 0; i < 5; i++) {
        PyObject *x = i == 3 ? headers : v[i];
        if (i != 3)
            Py_INCREF(x);
        PyTuple_SET_ITEM(self, i, x);
        if (PyObject_IS_GC(x) && (!PyTuple_CheckExact(x) || PyObject_GC_IsTracked(x)))
            atomic = 0;
    }
    /* A record of bytes, ints and None (no headers, or headers the GC does not track) can be
     * in no reference cycle: untrack it now, as the collector would untrack such a tuple at
     * its first pass (_PyTuple_MaybeUntrack). Otherwise every batch of records built would be
     * promoted and walked by the collector's older generations: measured, that made building
     * records several times slower than encoding them. (Record has __slots__ = (): its
     * instances hold nothing else; only this exact class gets here.) */
    if (atomic)
        PyObject_GC_UnTrack(self);
    return self;
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

static PyObject *
flatten(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "flatten(records, default_timestamp)");
        return NULL;
    }
    PyObject *records = args[0];
    long long default_ts = PyLong_AsLongLong(args[1]);
    if (default_ts == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t n;
    PyObject **items;
    if (!seq_items(records, &items, &n))
        Py_RETURN_NONE;
    Py_ssize_t key_bytes = 0, value_bytes = 0, n_headers = 0, hk_bytes = 0, hv_bytes = 0;
    long long first_ts = 0;
    /* pass 1: check every record, measure the buffers */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = items[i];
        if (!PyTuple_Check(r))
            Py_RETURN_NONE;
        Py_ssize_t m = PyTuple_GET_SIZE(r);
        if (m < 2 || m > 5)
            Py_RETURN_NONE;
        PyObject *key = PyTuple_GET_ITEM(r, 0), *value = PyTuple_GET_ITEM(r, 1);
        if (key != Py_None) {
            if (!PyBytes_Check(key))
                Py_RETURN_NONE;
            key_bytes += PyBytes_GET_SIZE(key);
        }
        if (value != Py_None) {
            if (!PyBytes_Check(value))
                Py_RETURN_NONE;
            value_bytes += PyBytes_GET_SIZE(value);
        }
        long long ts = default_ts, delta;
        if (m > 2) {
            PyObject *t = PyTuple_GET_ITEM(r, 2);
            if (t != Py_None) {
                int overflow;
                if (!PyLong_Check(t))
                    Py_RETURN_NONE;
                ts = PyLong_AsLongLongAndOverflow(t, &overflow);
                if (overflow)
                    Py_RETURN_NONE;
            }
        }
        if (i == 0)
            first_ts = ts;
        /* a timestampDelta outside int64: the per-record path raises for it */
        if (__builtin_sub_overflow(ts, first_ts, &delta))
            Py_RETURN_NONE;
        if (m > 3) {
            PyObject *hs = PyTuple_GET_ITEM(r, 3);
            if (hs != Py_None) {
                Py_ssize_t nh;
                PyObject **hitems;
                if (!seq_items(hs, &hitems, &nh))
                    Py_RETURN_NONE;
                for (Py_ssize_t j = 0; j < nh; j++) {
                    const char *hk;
                    Py_ssize_t hkl;
                    PyObject *hv;
                    if (!header_parts(hitems[j], &hk, &hkl, &hv))
                        Py_RETURN_NONE;
                    hk_bytes += hkl;
                    if (hv != Py_None)
                        hv_bytes += PyBytes_GET_SIZE(hv);
                }
                n_headers += nh;
            }
        }
        if (m > 4 && PyTuple_GET_ITEM(r, 4) != Py_None)
            Py_RETURN_NONE; /* explicit offsets: the Python path */
    }
    /* pass 2: fill */
    PyObject *out[14] = {NULL};
    Py_ssize_t sizes[14] = {
        8 * n, key_bytes, 8 * (n + 1), n, value_bytes, 8 * (n + 1), n,
        8 * (n + 1), hk_bytes, 8 * (n_headers + 1), hv_bytes, 8 * (n_headers + 1), n_headers, 0};
    for (int b = 0; b < 13; b++) {
        out[b] = PyBytes_FromStringAndSize(NULL, sizes[b]);
        if (out[b] == NULL) {
            for (int c = 0; c < b; c++)
                Py_DECREF(out[c]);
            return NULL;
        }
    }
    long long *timestamps = (long long *)PyBytes_AS_STRING(out[0]);
    char *kd = PyBytes_AS_STRING(out[1]);
    long long *ko = (long long *)PyBytes_AS_STRING(out[2]);
    char *kv = PyBytes_AS_STRING(out[3]);
    char *vd = PyBytes_AS_STRING(out[4]);
    long long *vo = (long long *)PyBytes_AS_STRING(out[5]);
    char *vv = PyBytes_AS_STRING(out[6]);
    long long *ho = (long long *)PyBytes_AS_STRING(out[7]);
    char *hkd = PyBytes_AS_STRING(out[8]);
    long long *hko = (long long *)PyBytes_AS_STRING(out[9]);
    char *hvd = PyBytes_AS_STRING(out[10]);
    long long *hvo = (long long *)PyBytes_AS_STRING(out[11]);
    char *hvv = PyBytes_AS_STRING(out[12]);
    long long kpos = 0, vpos = 0, h = 0, hkpos = 0, hvpos = 0, max_ts = -1;
    ko[0] = vo[0] = ho[0] = hko[0] = hvo[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *r = items[i];
        Py_ssize_t m = PyTuple_GET_SIZE(r);
        PyObject *key = PyTuple_GET_ITEM(r, 0), *value = PyTuple_GET_ITEM(r, 1);
        if (key != Py_None) {
            Py_ssize_t len = PyBytes_GET_SIZE(key);
            memcpy(kd + kpos, PyBytes_AS_STRING(key), len);
            kpos += len;
            kv[i] = 1;
        } else {
            kv[i] = 0;
        }
        ko[i + 1] = kpos;
        if (value != Py_None) {
            Py_ssize_t len = PyBytes_GET_SIZE(value);
            memcpy(vd + vpos, PyBytes_AS_STRING(value), len);
            vpos += len;
            vv[i] = 1;
        } else {
            vv[i] = 0;
        }
        vo[i + 1] = vpos;
        long long ts = default_ts;
        if (m > 2 && PyTuple_GET_ITEM(r, 2) != Py_None) {
            int overflow;
            ts = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(r, 2), &overflow);
        }
        timestamps[i] = ts;
        if (ts > max_ts)
            max_ts = ts;
        if (m > 3 && PyTuple_GET_ITEM(r, 3) != Py_None) {
            Py_ssize_t nh;
            PyObject **hitems;
            seq_items(PyTuple_GET_ITEM(r, 3), &hitems, &nh); /* checked in pass 1 */
            for (Py_ssize_t j = 0; j < nh; j++) {
                const char *hk;
                Py_ssize_t hkl;
                PyObject *hv;
                header_parts(hitems[j], &hk, &hkl, &hv); /* checked in pass 1 */
                memcpy(hkd + hkpos, hk, hkl);
                hkpos += hkl;
                hko[h + 1] = hkpos;
                if (hv != Py_None) {
                    Py_ssize_t len = PyBytes_GET_SIZE(hv);
                    memcpy(hvd + hvpos, PyBytes_AS_STRING(hv), len);
                    hvpos += len;
                    hvv[h] = 1;
                } else {
                    hvv[h] = 0;
                }
                hvo[h + 1] = hvpos;
                h++;
            }
        }
        ho[i + 1] = h;
    }
    PyObject *result = PyTuple_New(15);
    if (result == NULL) {
        for (int c = 0; c < 13; c++)
            Py_DECREF(out[c]);
        return NULL;
    }
    for (int b = 0; b < 13; b++)
        PyTuple_SET_ITEM(result, b, out[b]);
    PyTuple_SET_ITEM(result, 13, PyLong_FromSsize_t(n));
    PyTuple_SET_ITEM(result, 14, PyLong_FromLongLong(max_ts));
    if (PyTuple_GET_ITEM(result, 13) == NULL || PyTuple_GET_ITEM(result, 14) == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

static PyMethodDef methods[] = {
    {"install_record_constructor", install_record_constructor, METH_O,
     "install_record_constructor(cls): construct cls(key, value, timestamp=None, headers=(), "
     "offset=None) in C (cls.__new__ still handles every call shape it does not)."},
    {"flatten", (PyCFunction)(void (*)(void))flatten, METH_FASTCALL,
     "flatten(records, default_timestamp) -> (timestamps, key_data, key_offsets, key_valid, value_data, "
     "value_offsets, value_valid, header_offsets, header_key_data, header_key_offsets, "
     "header_value_data, header_value_offsets, header_value_valid, n, max_timestamp) as bytes "
     "(int64 / uint8 / bool buffers) and ints, or None when a record needs the Python path."},
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
