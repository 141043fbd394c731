//! With the `grpc` feature: compiles the pinned `spec/a2a/v1.0/a2a.proto` (and the
//! `google/api` files it imports, vendored beside it; read through the `proto` link) into a binary
//! `FileDescriptorSet` in `OUT_DIR`, which the gRPC binding's tests load into
//! `prost-reflect` to check the generated protobuf codec against an independent
//! implementation. `protox` is a protobuf compiler written in Rust, so no `protoc`
//! binary is needed.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(feature = "grpc")]
    descriptors();
}

#[cfg(feature = "grpc")]
fn descriptors() {
    use std::path::PathBuf;

    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    // `proto` is a symbolic link to the repository's `spec/a2a/v1.0`; `cargo package`
    // copies the files it points to, so a published crate builds from its own copy.
    let spec = crate_dir.join("proto");
    let proto = spec.join("a2a.proto");
    println!("cargo::rerun-if-changed={}", proto.display());
    let mut compiler = protox::Compiler::new([spec.clone(), spec.join("third_party")]).expect("protox include paths");
    compiler.include_imports(true).include_source_info(false);
    compiler.open_file("a2a.proto").unwrap_or_else(|e| panic!("compiling {}: {e}", proto.display()));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("a2a_descriptors.bin");
    std::fs::write(&out, compiler.encode_file_descriptor_set()).expect("writing the descriptor set");
}
