//! TSL's names for host events: the types grouping knows, the ones the trace viewer hides, and
//! how a TensorFlow op's name is recognised.

/// TensorFlow's loop ops: with one of them in a space, xprof does not group (nor mark eager ops).
pub(crate) const LOOP_OPS: &[&str] = &[
    "WhileOp-EvalCond",
    "WhileOp-StartBody",
    "ForOp",
    "ParallelForOp",
    "ForeverOp",
];

/// Every name TSL's `FindHostEventType` knows (an event with one of these names is not a kernel).
pub(crate) const HOST_EVENT_TYPES: &[&str] = &[
    "UnknownHostEventType",
    "TraceContext",
    "SessionRun",
    "FunctionRun",
    "RunGraph",
    "RunGraphDone",
    "TfOpRun",
    "EagerExecute",
    "ExecutorState::Process",
    "ExecutorDoneCallback",
    "MemoryAllocation",
    "MemoryDeallocation",
    "RemotePerfCounter",
    "InstantiatedCapturedFunction::Run",
    "InstantiatedCapturedFunction::RunWithBorrowedArgs",
    "InstantiatedCapturedFunction::RunInstantiated",
    "InstantiatedCapturedFunction::RunAsync",
    "ParallelForOp",
    "ForeverOp",
    "WhileOp-EvalCond",
    "WhileOp-StartBody",
    "ForOp",
    "IteratorGetNextOp::DoCompute",
    "IteratorGetNextAsOptionalOp::DoCompute",
    "Iterator",
    "Iterator::Prefetch::Generator",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializeInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
    "ParallelBatchProduce",
    "ParallelBatchConsume",
    "BatchingSessionRun",
    "ProcessBatch",
    "BrainSessionRun",
    "ConcatInputTensors",
    "MergeInputTensors",
    "ScheduleWithoutSplit",
    "ScheduleWithSplit",
    "ScheduleWithEagerSplit",
    "ASBSQueue::Schedule",
    "OrbaxServing::ProcessBatch",
    "OrbaxServing::ConcatInputBuffers",
    "TfrtModelRun",
    "ServingModelRun",
    "KernelLaunch",
    "KernelExecute",
    "EnqueueRequestLocked",
    "RunProgramRequest",
    "HostCallbackRequest",
    "TransferH2DRequest",
    "TransferPreprocessedH2DRequest",
    "TransferD2HRequest",
    "OnDeviceSendRequest",
    "OnDeviceRecvRequest",
    "OnDeviceSendRecvLocalRequest",
    "CustomWait",
    "OnDeviceSendRequestMulti",
    "OnDeviceRecvRequestMulti",
    "PjrtAsyncWait",
    "DoEnqueueProgram",
    "DoEnqueueContinuationProgram",
    "WriteHbm",
    "ReadHbm",
    "TpuExecuteOp",
    "CompleteCallbacks",
    "TPUPartitionedCallOp-InitializeVarOnTPU",
    "TPUPartitionedCallOp-ExecuteRemote",
    "TPUPartitionedCallOp-ExecuteLocal",
    "Linearize",
    "Delinearize",
    "TransferBufferFromDevice-FastPath",
    "tpu::System::TransferToDevice=>IssueEvent",
    "tpu::System::TransferToDevice=>IssueEvent=>Done",
    "tpu::System::TransferFromDevice=>IssueEvent",
    "tpu::System::TransferFromDevice=>IssueEvent=>Done",
    "tpu::System::Execute",
];

/// Host event types the trace viewer never shows (TSL's `IsInternalEvent`).
pub(crate) const INTERNAL_EVENTS: &[&str] = &[
    "MemoryAllocation",
    "MemoryDeallocation",
    "PrefetchProduce",
    "PrefetchConsume",
    "ParallelInterleaveProduce",
    "ParallelInterleaveConsume",
    "ParallelInterleaveInitializeInput",
    "ParallelMapProduce",
    "ParallelMapConsume",
    "MapAndBatchProduce",
    "MapAndBatchConsume",
    "ParseExampleProduce",
    "ParseExampleConsume",
];

/// The kind of event, as far as `is_eager` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `EagerExecute`.
    Eager,
    /// A TensorFlow op (`name:Type`, or `TfOpRun`): marked.
    TfOp,
    /// Another of TensorFlow's host event types.
    OtherType,
    /// No type: a kernel launch on the host or a kernel on a device when it has a correlation id.
    Untyped,
}

pub(crate) fn kind_of(name: &str) -> Kind {
    match name {
        "EagerExecute" => Kind::Eager,
        "TfOpRun" => Kind::TfOp,
        _ if HOST_EVENT_TYPES.contains(&name) => Kind::OtherType,
        _ if is_tf_op(name) => Kind::TfOp,
        _ => Kind::Untyped,
    }
}

/// Whether TSL's `ParseTfOpFullname` puts `name` in the TensorFlow category: `name:Type` with a
/// node name and a CamelCase op type, or `name:` whose last scope is not a JAX op type.
pub(crate) fn is_tf_op(name: &str) -> bool {
    let Some((op_name, op_type)) = name.split_once(':') else {
        return false;
    };
    if op_name == "Iterator" {
        return false;
    }
    let is_name = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
            && chars.all(|c| c.is_ascii_alphanumeric() || "_./>-".contains(c))
    };
    let is_type = |s: &str| {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let is_jax_type = |s: &str| {
        let base = match s.find('[') {
            Some(i) if s.ends_with(']') => &s[..i],
            Some(_) => return false,
            None => s,
        };
        let mut chars = base.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if is_name(op_name) && is_type(op_type) {
        return true;
    }
    if op_type.is_empty() {
        let last = op_name.rsplit('/').next().unwrap_or(op_name);
        return !is_jax_type(last);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tf_op_names() {
        assert!(is_tf_op("dense/MatMul:MatMul"));
        assert!(is_tf_op("a:_Send"));
        assert!(!is_tf_op("Iterator::Prefetch"));
        assert!(!is_tf_op("cudaLaunchKernel"));
        assert!(!is_tf_op("jit_f/add:add"));
    }
}
