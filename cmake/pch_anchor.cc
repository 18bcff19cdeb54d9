// Compiles nothing: the target it belongs to builds a precompiled header
// (cmake/precompiled_headers.cmake).
