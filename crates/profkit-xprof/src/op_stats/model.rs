//! xprof's `ModelTracker`, as far as op names tell: whether a profile trains (gradient name
//! scopes in TensorFlow, `transpose(` scopes in JAX) and its architecture (xprof 2.24.2 detects
//! none from op names: always "Unknown").

use crate::preprocess::derived::tf_op::{
    is_jax_op_type, is_tf_op_name, is_tf_op_type, name_scopes,
};

/// What the ops seen so far say of the model.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelTracker {
    tf_gradients: bool,
    tf_gradient_tape: bool,
    jax_transpose: bool,
}

impl ModelTracker {
    /// Takes in one op, by name and type.
    pub fn process_op(&mut self, name: &str, op_type: &str) {
        if is_tf_op_type(op_type) && is_tf_op_name(name) {
            if !self.tf_gradient_tape || !self.tf_gradients {
                for scope in name_scopes(name) {
                    if let Some(rest) = scope.strip_prefix("gradient") {
                        if rest == "_tape" {
                            self.tf_gradient_tape = true;
                        } else if rest.starts_with('s') {
                            self.tf_gradients = true;
                        }
                    }
                }
            }
        } else if (is_jax_op_name_and_type(name, op_type) || op_type.is_empty())
            && !self.jax_transpose
            && name.split('/').any(|s| s.starts_with("transpose("))
        {
            self.jax_transpose = true;
        }
    }

    /// Whether the profile trains (has gradients).
    pub fn is_training(&self) -> bool {
        self.tf_gradients || self.tf_gradient_tape || self.jax_transpose
    }

    /// "Training" or "Inference".
    pub fn task_type(&self) -> &'static str {
        if self.is_training() {
            "Training"
        } else {
            "Inference"
        }
    }

    /// The architecture xprof names; "Unknown", since xprof 2.24.2 sets none of its kinds.
    pub fn architecture_type(&self) -> &'static str {
        "Unknown"
    }
}

/// TSL's `IsJaxOpNameAndType`: a JAX op type that the name's last scope contains.
fn is_jax_op_name_and_type(name: &str, op_type: &str) -> bool {
    !name.is_empty()
        && is_jax_op_type(op_type)
        && name
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains(op_type))
}
