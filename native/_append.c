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
 * Both run with the GIL held (the pwrite they precede releases it).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first: its pyconfig.h defines _GNU_SOURCE (fallocate) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

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

static PyObject *crc32c_func; /* crc32c.crc32c */

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
    if (PyObject_GetBuffer(args[0], &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        /* not contiguous: the general path's error, not this one's */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    const unsigned char *p = view.buf;
    Py_ssize_t n = view.len;
    PyObject *result = NULL;
    /* one dimension of single bytes only: the caller's len(data) is then the byte count */
    if (view.ndim > 1 || view.itemsize != 1 || n < V2_HEADER_SIZE || p[OFF_MAGIC] != 2
        || (int64_t)(int32_t)be32(p + OFF_LENGTH) + 12 != (int64_t)n
        || (int32_t)be32(p + OFF_LAST_DELTA) < 0
        || (int64_t)be64(p + OFF_PRODUCER_ID) != -1
        || (p[OFF_ATTRIBUTES + 1] & ATTR_TXN_OR_CONTROL))
        goto none;
    if (check_crc) {
        /* a read-only view of the bytes after the CRC field: the caller's buffer, uncopied
           (released before we return: the crc32c call does not keep it) */
        PyObject *mv = PyMemoryView_FromMemory((char *)p + OFF_ATTRIBUTES,
                                               n - OFF_ATTRIBUTES, PyBUF_READ);
        if (mv == NULL)
            goto done;
        PyObject *crc = PyObject_CallOneArg(crc32c_func, mv);
        Py_DECREF(mv);
        if (crc == NULL)
            goto done;
        unsigned long value = PyLong_AsUnsignedLong(crc);
        Py_DECREF(crc);
        if (value == (unsigned long)-1 && PyErr_Occurred())
            goto done;
        if (value != be32(p + OFF_CRC))
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
    long long offset = PyLong_AsLongLong(args[1]);
    if (offset == -1 && PyErr_Occurred())
        return NULL;
    long long length = PyLong_AsLongLong(args[2]);
    if (length == -1 && PyErr_Occurred())
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

static PyMethodDef methods[] = {
    {"single_v2_batch", (PyCFunction)(void (*)(void))single_v2_batch, METH_FASTCALL,
     "single_v2_batch(data, check_crc) -> (base_offset, last_offset, partition_leader_epoch, "
     "max_timestamp, records_count) of one whole v2 batch a log may append on its fast path, "
     "or None (see the source's opening comment)."},
    {"reserve_blocks", (PyCFunction)(void (*)(void))reserve_blocks, METH_FASTCALL,
     "reserve_blocks(fd, offset, length) -> errno: fallocate(FALLOC_FL_KEEP_SIZE); 0 on "
     "success."},
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
    return PyModule_Create(&module_def);
}
