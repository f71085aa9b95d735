//! @car/native: the hot DAG/verify kernels over compact integer arrays.
//!
//! Every kernel reads and writes typed arrays the caller allocated
//! (`Int32Array`/`Uint8Array`), so nothing is marshalled element by element:
//! the addon sees the arrays' memory directly. Inputs are checked (lengths,
//! index ranges) before use; a malformed call is a thrown `TypeError`, never
//! undefined behaviour. The TypeScript implementations in @car/ir and
//! @car/verify are the reference; these must give identical answers.

mod kernels;

/// Bumped whenever a kernel's signature changes; the loader refuses a binary built from older source.
const ABI: i32 = 3;
mod napi;

use napi::*;
use std::os::raw::c_char;
use std::ptr;

/// A typed array argument as a slice of its elements.
struct Arg {
    kind: i32,
    data: *mut u8,
    length: usize,
}

unsafe fn typed_array(env: napi_env, value: napi_value) -> Option<Arg> {
    let mut kind = 0;
    let mut length = 0;
    let mut data: *mut std::os::raw::c_void = ptr::null_mut();
    let mut buffer: napi_value = ptr::null_mut();
    let mut offset = 0;
    if napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut data, &mut buffer, &mut offset) != NAPI_OK {
        return None;
    }
    Some(Arg { kind, data: data as *mut u8, length })
}

impl Arg {
    unsafe fn i32s<'a>(&self) -> Option<&'a mut [i32]> {
        if self.kind != NAPI_INT32_ARRAY && self.kind != NAPI_UINT32_ARRAY {
            return None;
        }
        if self.length == 0 {
            return Some(&mut []);
        }
        Some(std::slice::from_raw_parts_mut(self.data as *mut i32, self.length))
    }
    unsafe fn u8s<'a>(&self) -> Option<&'a mut [u8]> {
        if self.kind != NAPI_UINT8_ARRAY {
            return None;
        }
        if self.length == 0 {
            return Some(&mut []);
        }
        Some(std::slice::from_raw_parts_mut(self.data, self.length))
    }
}

unsafe fn raw_args<const N: usize>(env: napi_env, info: napi_callback_info) -> Option<[napi_value; N]> {
    let mut argc = N;
    let mut argv: [napi_value; N] = [ptr::null_mut(); N];
    if napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) != NAPI_OK || argc < N {
        return None;
    }
    Some(argv)
}

unsafe fn args<const N: usize>(env: napi_env, info: napi_callback_info) -> Option<[Arg; N]> {
    let argv = raw_args::<N>(env, info)?;
    let mut out: [Option<Arg>; N] = std::array::from_fn(|_| None);
    for i in 0..N {
        out[i] = Some(typed_array(env, argv[i])?);
    }
    Some(out.map(|a| a.unwrap()))
}

unsafe fn fail(env: napi_env, message: &str) -> napi_value {
    let text = format!("{message}\0");
    napi_throw_type_error(env, ptr::null(), text.as_ptr() as *const c_char);
    ptr::null_mut()
}

unsafe fn int(env: napi_env, value: i32) -> napi_value {
    let mut out = ptr::null_mut();
    napi_create_int32(env, value, &mut out);
    out
}

/// `levels(predStart, preds, orderOut, levelOut)`: Kahn's algorithm; returns how many actions were ordered.
unsafe extern "C" fn levels(env: napi_env, info: napi_callback_info) -> napi_value {
    let Some([a, b, c, d]) = args::<4>(env, info) else { return fail(env, "levels(predStart, preds, order, level): four Int32Arrays expected") };
    let (Some(start), Some(preds), Some(order), Some(level)) = (a.i32s(), b.i32s(), c.i32s(), d.i32s()) else {
        return fail(env, "levels: Int32Array arguments expected");
    };
    match kernels::levels(start, preds, order, level) {
        Ok(count) => int(env, count as i32),
        Err(message) => fail(env, message),
    }
}

/// `reach(predStart, preds, order, level, from, to, answers, budget)`: for each query, 1 when action `from` reaches action `to`.
unsafe extern "C" fn reach(env: napi_env, info: napi_callback_info) -> napi_value {
    const USAGE: &str = "reach(predStart, preds, order, level, from, to, answers, budget): seven typed arrays and an integer expected";
    let Some(argv) = raw_args::<8>(env, info) else { return fail(env, USAGE) };
    let mut arrays: [Option<Arg>; 7] = std::array::from_fn(|_| None);
    for i in 0..7 {
        let Some(arg) = typed_array(env, argv[i]) else { return fail(env, USAGE) };
        arrays[i] = Some(arg);
    }
    let mut budget = 0;
    if napi_get_value_int32(env, argv[7], &mut budget) != NAPI_OK {
        return fail(env, USAGE);
    }
    let [a, b, c, d, e, f, g] = arrays.map(|a| a.unwrap());
    let (Some(start), Some(preds), Some(order), Some(level), Some(from), Some(to), Some(answers)) = (a.i32s(), b.i32s(), c.i32s(), d.i32s(), e.i32s(), f.i32s(), g.u8s()) else {
        return fail(env, "reach: Int32Array arguments and a Uint8Array of answers expected");
    };
    match kernels::reach(start, preds, order, level, from, to, answers, budget) {
        Ok(()) => int(env, 0),
        Err(message) => fail(env, message),
    }
}

/// `group(order, keyStart, keyIds, groupStart, membersOut)`: actions bucketed by key id, each bucket in `order`.
unsafe extern "C" fn group(env: napi_env, info: napi_callback_info) -> napi_value {
    let Some([a, b, c, d, e]) = args::<5>(env, info) else { return fail(env, "group(order, keyStart, keyIds, groupStart, members): five Int32Arrays expected") };
    let (Some(order), Some(key_start), Some(key_ids), Some(group_start), Some(members)) = (a.i32s(), b.i32s(), c.i32s(), d.i32s(), e.i32s()) else {
        return fail(env, "group: Int32Array arguments expected");
    };
    match kernels::group(order, key_start, key_ids, group_start, members) {
        Ok(()) => int(env, 0),
        Err(message) => fail(env, message),
    }
}

unsafe fn export(env: napi_env, exports: napi_value, name: &str, cb: napi_callback) {
    let cname = format!("{name}\0");
    let mut f = ptr::null_mut();
    napi_create_function(env, cname.as_ptr() as *const c_char, name.len(), cb, ptr::null_mut(), &mut f);
    napi_set_named_property(env, exports, cname.as_ptr() as *const c_char, f);
}

/// The entry point node looks up when it loads a N-API addon.
#[no_mangle]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    export(env, exports, "levels", levels);
    export(env, exports, "reach", reach);
    export(env, exports, "group", group);
    let mut abi = ptr::null_mut();
    napi_create_int32(env, ABI, &mut abi);
    napi_set_named_property(env, exports, "abi\0".as_ptr() as *const c_char, abi);
    exports
}
