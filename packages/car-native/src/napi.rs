//! The few N-API C functions this addon calls, declared by hand (no crates are
//! reachable here). They are resolved from the running node binary when the
//! addon is loaded, so the library links with them undefined.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_void};

pub type napi_env = *mut c_void;
pub type napi_value = *mut c_void;
pub type napi_callback_info = *mut c_void;
pub type napi_status = i32;
pub type napi_callback = unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value;

pub const NAPI_OK: napi_status = 0;
/// `napi_typedarray_type`: the element types this addon accepts.
pub const NAPI_UINT8_ARRAY: i32 = 1;
pub const NAPI_INT32_ARRAY: i32 = 5;
pub const NAPI_UINT32_ARRAY: i32 = 6;

extern "C" {
    pub fn napi_create_function(
        env: napi_env,
        name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_set_named_property(env: napi_env, object: napi_value, name: *const c_char, value: napi_value) -> napi_status;
    pub fn napi_get_cb_info(
        env: napi_env,
        info: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;
    pub fn napi_get_typedarray_info(
        env: napi_env,
        typedarray: napi_value,
        kind: *mut i32,
        length: *mut usize,
        data: *mut *mut c_void,
        arraybuffer: *mut napi_value,
        byte_offset: *mut usize,
    ) -> napi_status;
    pub fn napi_get_value_int32(env: napi_env, value: napi_value, result: *mut i32) -> napi_status;
    pub fn napi_create_int32(env: napi_env, value: i32, result: *mut napi_value) -> napi_status;
    pub fn napi_throw_type_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
}
