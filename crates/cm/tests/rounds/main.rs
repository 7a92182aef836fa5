//! The context-mixing model's integration tests, one module per round or
//! model family (each file was its own test binary until stop 42; one binary
//! links once: building the tests took 59 s of CPU instead of 145 s,
//! `cargo clean -p sep-cm && cargo test -p sep-cm --tests --no-run`). Run one module
//! with `cargo test -p sep-cm --test rounds MODULE::`.

mod common;

mod audio14_rev14;
mod audio38_rev38;
mod audio4;
mod biff32_rev32;
mod code_models;
mod code_rev10;
mod code_rev12;
mod code_rev7;
mod ctx_rev12;
mod elf38_rev38;
mod exe40_rev40;
mod exe42_rev42;
mod float18_rev18;
mod float24_rev24;
mod float26_rev26;
mod float44_rev44;
mod float_rev7;
mod image16_rev16;
mod image18_rev18;
mod image22_rev22;
mod image28_rev28;
mod image32_rev32;
mod image36_rev36;
mod image38_rev38;
mod image40_rev40;
mod image42_rev42;
mod image_rev10;
mod image_rev14;
mod image_rev4;
mod image_rev7;
mod jpeg36_rev36;
mod jpeg_rev5;
mod jpeg_rev7;
mod kindmix36_rev36;
mod kindmix_rev12;
mod lstm_rev2;
mod m68k34_rev34;
mod mix_round_trip;
mod pic_rev12;
mod prior_rev12;
mod prior_rev26;
mod prose42_rev42;
mod rec_rev10;
mod rec_rev12;
mod revisions;
mod serial_delay;
mod serial_quiet;
mod skip_rev9;
mod small34_rev34;
mod small40_rev40;
mod small_rev22;
mod small_rev7;
mod text16_rev16;
mod text18_rev18;
mod text20_rev20;
mod text22_rev22;
mod text28_rev28;
mod text30_rev30;
mod text32_rev32;
mod text34_rev34;
mod text38_rev38;
mod text_rev10;
mod text_rev4;
mod text_rev5;
mod text_rev7;
mod words_rev8;
mod x86_30_rev30;
mod x86_32_rev32;
mod x86_rev14;
mod x86_rev16;
