//! Tests of `hrl report`, `hrl compare` and `hrl plan` (one integration binary): run directories
//! are synthesised from the real record types by [`util`] (data, not a model), or a
//! real SmolLM2 run recorded earlier (`fixtures/oracle-run`: the file-oracle proposer
//! on three families, K = 2, G = 2, M = 2); every command runs with an empty private
//! `HRL_HOME`, so no model is installed.

mod compare;
mod plan;
mod render;
mod util;
