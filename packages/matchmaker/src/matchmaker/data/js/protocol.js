// The data plane's wire types, generated from the msgspec Structs of
// matchmaker.data.protocol (and the core's mode events and answers) by
// tests/matchmaker/data/js_protocol.py: do not edit. tests/matchmaker/data/test_js_protocol.py
// fails when this file is not what the Structs render.
export {};
