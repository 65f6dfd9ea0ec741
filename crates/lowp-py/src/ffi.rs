//! The FFI module of lowp-py: NumPy's memory-handler C API (NumPy 1.22 and later, NEP 49), so
//! that `lowp.cast` allocates its new arrays through [`crate::output_cache`] and their memory
//! is reused once they die.
//!
//! While [`new_output`] makes an array, lowp's handler is NumPy's current one (a context
//! variable, set and restored around the call). The array keeps a reference to the handler
//! and frees its memory through it, whenever and on whichever thread it dies, so every
//! output and every view of one frees into the cache. The handler wraps the handler that was
//! current when the module first made an array (NumPy's default, unless something else set
//! one): a request the cache cannot serve goes there, and so does every block the cache does
//! not keep, with the size that handler allocated it with.
//!
//! The handler's `malloc` returns zeroed memory from the wrapped handler's `calloc`, or a
//! block that held an earlier result: never uninitialised memory, so the conversions may
//! write the new array through `&mut [T]` (see the `// SAFETY:` comment in [`new_output`]).
//! `calloc` of a large block is an `mmap` whose pages the kernel zeroes on first write, so it
//! costs nothing more than `malloc`.
//!
//! Where NumPy is older than 1.22, [`new_output`] makes arrays with `numpy.zeros` and nothing is
//! kept.
#![allow(unsafe_code)]

use crate::output_cache::{Block, Cache, Info};
use bytemuck::Pod;
use numpy::{Element, PY_ARRAY_API, PyArrayDyn};
use pyo3::ffi as py_ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use std::ffi::{c_char, c_uint, c_void};
use std::ptr::NonNull;
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

/// NumPy's `PyDataMemAllocator` (`ndarraytypes.h`), version 1.
#[repr(C)]
#[derive(Clone, Copy)]
struct Allocator {
    ctx: *mut c_void,
    malloc: unsafe extern "C" fn(ctx: *mut c_void, size: usize) -> *mut c_void,
    calloc: unsafe extern "C" fn(ctx: *mut c_void, nelem: usize, elsize: usize) -> *mut c_void,
    realloc: unsafe extern "C" fn(ctx: *mut c_void, ptr: *mut c_void, size: usize) -> *mut c_void,
    free: unsafe extern "C" fn(ctx: *mut c_void, ptr: *mut c_void, size: usize),
}

/// NumPy's `PyDataMem_Handler`: a name, the struct's version and the allocator.
#[repr(C)]
struct Handler {
    name: [c_char; 127],
    version: u8,
    allocator: Allocator,
}

// SAFETY: an `Allocator` is a table of function pointers and the context they take. NumPy
// calls a handler's functions from whichever thread frees an array, so the functions of any
// handler (NumPy's, lowp's) must be callable from every thread, and the context is only ever
// passed back to them.
unsafe impl Send for Allocator {}
// SAFETY: as for `Send`; neither is ever written after it is made.
unsafe impl Sync for Allocator {}
// SAFETY: a `Handler` holds a name, a version and an `Allocator`, none written after it is made.
unsafe impl Sync for Handler {}

/// `PyDataMem_SetHandler`: sets the current handler (a capsule named "mem_handler") and
/// returns the previous one, a new reference (NULL with an exception set on failure).
type SetHandler = unsafe extern "C" fn(handler: *mut py_ffi::PyObject) -> *mut py_ffi::PyObject;

/// `PyDataMem_GetHandler`: the current handler, a new reference.
type GetHandler = unsafe extern "C" fn() -> *mut py_ffi::PyObject;

/// The first NumPy C API feature version with memory handlers (1.22).
const HANDLER_API_VERSION: c_uint = 0x0000000f;

/// The slots of `PyDataMem_SetHandler` and `PyDataMem_GetHandler` in NumPy's C API table
/// (`__multiarray_api.h`).
const SET_HANDLER_SLOT: usize = 304;
/// See [`SET_HANDLER_SLOT`].
const GET_HANDLER_SLOT: usize = 305;

/// The capsule name NumPy requires of a handler.
const CAPSULE_NAME: &std::ffi::CStr = c"mem_handler";

/// lowp's handler, as NumPy reads it.
static HANDLER: Handler = Handler {
    name: handler_name(b"lowp_output_cache"),
    version: 1,
    allocator: Allocator {
        ctx: std::ptr::null_mut(),
        malloc: cached_malloc,
        calloc: cached_calloc,
        realloc: cached_realloc,
        free: cached_free,
    },
};

/// The handler that lowp's handler wraps; set once, before lowp's handler is first used.
static WRAPPED: OnceLock<Allocator> = OnceLock::new();

/// The blocks kept.
static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

/// `name` as a handler's NUL-padded name field.
const fn handler_name(name: &[u8]) -> [c_char; 127] {
    let mut field = [0; 127];
    let mut i = 0;
    while i < name.len() && i < 126 {
        field[i] = name[i] as c_char;
        i += 1;
    }
    field
}

/// The cache, whatever a panic elsewhere left it as: its state is valid between any two
/// calls, since none of its methods can panic halfway.
fn cache() -> MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Frees `blocks` in the wrapped handler.
fn release(blocks: Vec<Block>) {
    let Some(wrapped) = WRAPPED.get() else {
        return;
    };
    for block in blocks {
        // SAFETY: every block the cache returns came from the wrapped handler with this
        // capacity (or was freed to lowp's handler with this size, as NumPy frees), and the
        // cache returns a block once: it is no longer lent or kept.
        unsafe { (wrapped.free)(wrapped.ctx, block.addr as *mut c_void, block.capacity) };
    }
}

/// lowp's `malloc`: a kept block of about `size` bytes, else zeroed memory from the wrapped
/// handler's `calloc`.
unsafe extern "C" fn cached_malloc(_ctx: *mut c_void, size: usize) -> *mut c_void {
    let kept = cache().take(size);
    match kept {
        Some(block) => block.addr as *mut c_void,
        // SAFETY: same arguments as NumPy's own `calloc` call takes.
        None => unsafe { cached_calloc(std::ptr::null_mut(), size, 1) },
    }
}

/// lowp's `calloc`: zeroed memory from the wrapped handler, recorded as lent when large.
unsafe extern "C" fn cached_calloc(_ctx: *mut c_void, nelem: usize, elsize: usize) -> *mut c_void {
    let Some(wrapped) = WRAPPED.get() else {
        return std::ptr::null_mut();
    };
    // SAFETY: the wrapped handler's own function with its own context.
    let p = unsafe { (wrapped.calloc)(wrapped.ctx, nelem, elsize) };
    if let (false, Some(capacity)) = (p.is_null(), nelem.checked_mul(elsize)) {
        cache().lend(Block {
            addr: p as usize,
            capacity,
        });
    }
    p
}

/// lowp's `realloc` (`ndarray.resize`): the wrapped handler's. The block is no longer one the
/// cache lent, so it goes back to the wrapped handler when freed, with the size NumPy frees it
/// with: the size asked for here, as the wrapped handler then knows it.
unsafe extern "C" fn cached_realloc(
    _ctx: *mut c_void,
    ptr: *mut c_void,
    size: usize,
) -> *mut c_void {
    let Some(wrapped) = WRAPPED.get() else {
        return std::ptr::null_mut();
    };
    cache().forget(ptr as usize);
    // SAFETY: the wrapped handler's own function, on a block it allocated.
    unsafe { (wrapped.realloc)(wrapped.ctx, ptr, size) }
}

/// lowp's `free`: the block is kept for the next result, or goes back to the wrapped handler.
unsafe extern "C" fn cached_free(_ctx: *mut c_void, ptr: *mut c_void, size: usize) {
    if ptr.is_null() {
        return;
    }
    let dropped = cache().give_back(ptr as usize, size);
    release(dropped);
}

/// What lowp needs of NumPy's C API to set its handler.
struct NumpyHandlers {
    /// `PyDataMem_SetHandler`.
    set: SetHandler,
    /// lowp's handler as the capsule NumPy takes.
    ours: Py<PyCapsule>,
}

/// NumPy's handler API, when this NumPy has it (1.22 or later).
fn numpy_handlers(py: Python<'_>) -> Option<&'static NumpyHandlers> {
    static HANDLERS: PyOnceLock<Option<NumpyHandlers>> = PyOnceLock::new();
    HANDLERS.get_or_init(py, || connect(py).ok()).as_ref()
}

/// Finds `PyDataMem_SetHandler`, wraps the current handler and makes lowp's capsule.
fn connect(py: Python<'_>) -> PyResult<NumpyHandlers> {
    let unsupported = || pyo3::exceptions::PyRuntimeError::new_err("NumPy before 1.22");
    // SAFETY: a call through rust-numpy's validated API table, with no arguments.
    if unsafe { PY_ARRAY_API.PyArray_GetNDArrayCFeatureVersion(py) } < HANDLER_API_VERSION {
        return Err(unsupported());
    }
    let module = PyModule::import(py, "numpy._core.multiarray")
        .or_else(|_| PyModule::import(py, "numpy.core.multiarray"))?;
    let api = module.getattr("_ARRAY_API")?.cast_into::<PyCapsule>()?;
    let table = api.pointer_checked(None)?.cast::<*const c_void>();
    let slot = |i: usize| {
        // SAFETY: NumPy's API table has these slots from feature version 0xf on, checked
        // above, and the module holding it is never unloaded.
        let f = unsafe { table.add(i).read() };
        NonNull::new(f.cast_mut()).ok_or_else(unsupported)
    };
    // SAFETY: the slots hold `PyDataMem_SetHandler` and `PyDataMem_GetHandler`, whose C
    // signatures these types spell.
    let (set, get) = unsafe {
        (
            std::mem::transmute::<*mut c_void, SetHandler>(slot(SET_HANDLER_SLOT)?.as_ptr()),
            std::mem::transmute::<*mut c_void, GetHandler>(slot(GET_HANDLER_SLOT)?.as_ptr()),
        )
    };
    // SAFETY: `PyDataMem_GetHandler` returns a new reference or NULL with an exception set.
    let current = unsafe { Bound::from_owned_ptr_or_err(py, get())? }.cast_into::<PyCapsule>()?;
    let current_ptr = current
        .pointer_checked(Some(CAPSULE_NAME))?
        .cast::<Handler>();
    // SAFETY: a capsule named "mem_handler" holds a `PyDataMem_Handler`; version 1 and later
    // begin with the fields `Handler` declares.
    let wrapped = unsafe { current_ptr.as_ref() }.allocator;
    // The wrapped handler must outlive every block it allocated: keep its capsule for good.
    std::mem::forget(current);
    WRAPPED.get_or_init(|| wrapped);
    let ours = NonNull::from(&HANDLER).cast::<c_void>();
    // SAFETY: `HANDLER` is a static, valid for as long as the capsule is.
    let ours = unsafe { PyCapsule::new_with_pointer(py, ours, CAPSULE_NAME)? }.unbind();
    Ok(NumpyHandlers { set, ours })
}

/// Sets NumPy's current handler back to `previous` when dropped, even on an early return.
struct Restore<'py> {
    set: SetHandler,
    previous: Bound<'py, PyAny>,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        // SAFETY: `PyDataMem_SetHandler` takes a borrowed handler capsule (the one it
        // returned before) and returns a new reference to ours, or NULL with an exception.
        let ours = unsafe { (self.set)(self.previous.as_ptr()) };
        if ours.is_null() {
            // Nothing better to do in a drop; the exception must not leak into later calls.
            drop(PyErr::take(self.previous.py()));
        } else {
            // SAFETY: the new reference just returned, released once.
            unsafe { py_ffi::Py_DECREF(ours) };
        }
    }
}

/// A new array of `T` of `shape` (Fortran order if `fortran`), allocated through lowp's
/// handler so that its memory returns to the cache when it dies; its elements are zeros, or
/// an earlier result's bits, for the caller to overwrite. With NumPy before 1.22, a
/// `numpy.zeros` array.
pub fn new_output<'py, T: Element + Pod>(
    py: Python<'py>,
    shape: &[usize],
    fortran: bool,
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let Some(handlers) = numpy_handlers(py) else {
        return Ok(PyArrayDyn::zeros(py, shape, fortran));
    };
    // SAFETY: `PyDataMem_SetHandler` takes a borrowed capsule named "mem_handler" and returns
    // the previous handler as a new reference, or NULL with an exception set.
    let previous =
        unsafe { Bound::from_owned_ptr_or_err(py, (handlers.set)(handlers.ours.as_ptr()))? };
    let _restore = Restore {
        set: handlers.set,
        previous,
    };
    // SAFETY: rust-numpy leaves the elements of `new` as the allocator returned them, and
    // lowp's allocator returns initialised memory only (see the module's doc): zeros from
    // `calloc`, or a kept block, every byte of which held an earlier array's elements or
    // zeros. `T` is `Pod`: every bit pattern is a valid `T`.
    Ok(unsafe { PyArrayDyn::<T>::new(py, shape, fortran) })
}

/// Whether new arrays go through lowp's handler (NumPy 1.22 or later), and the cache's state.
pub fn cache_info(py: Python<'_>) -> (bool, Info) {
    (numpy_handlers(py).is_some(), cache().info())
}

/// Sets the most bytes the cache keeps (0: none), releasing what no longer fits; returns the
/// previous limit.
pub fn set_cache_limit(limit: usize) -> usize {
    let (previous, dropped) = cache().set_limit(limit);
    release(dropped);
    previous
}

/// Releases every kept block to NumPy's allocator; returns the bytes released.
pub fn empty_cache() -> usize {
    let dropped = cache().empty();
    let bytes = dropped.iter().map(|b| b.capacity).sum();
    release(dropped);
    bytes
}
