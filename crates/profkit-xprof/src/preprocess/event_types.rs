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
// `EventType::Other` holds a position in this list in a byte.
const _: () = assert!(HOST_EVENT_TYPES.len() < u8::MAX as usize);

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

/// An event's type as TSL's TensorFlow plane visitor gives it (`HostEventType`), as far as
/// grouping tells types apart: by its metadata name among TSL's host event types, else by its
/// name as a TensorFlow op (`TfOpRun`) or a tf.data iterator (`Iterator`); an event without a
/// type is a kernel launch (on `/host:CPU`) or execution (elsewhere) when it has a
/// `correlation_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum EventType {
    /// No type (`kUnknownHostEventType`).
    Unknown,
    TraceContext,
    SessionRun,
    FunctionRun,
    RunGraph,
    ExecutorStateProcess,
    TfOpRun,
    EagerExecute,
    /// One of tf.data's captured function runs (whose `id` marks a tf.data step).
    CapturedFunctionRun,
    IteratorGetNext,
    IteratorGetNextAsOptional,
    Iterator,
    SecondIterator,
    ProcessBatch,
    OrbaxProcessBatch,
    BatchingSessionRun,
    KernelLaunch,
    KernelExecute,
    /// Another of TSL's host event types, by its position in the list.
    Other(u8),
}

impl EventType {
    /// The type TSL's visitor gives an event metadata named `name` (`None`: no type).
    pub(crate) fn of_name(name: &str) -> Option<EventType> {
        let known = match name {
            "UnknownHostEventType" => EventType::Unknown,
            "TraceContext" => EventType::TraceContext,
            "SessionRun" => EventType::SessionRun,
            "FunctionRun" => EventType::FunctionRun,
            "RunGraph" => EventType::RunGraph,
            "ExecutorState::Process" => EventType::ExecutorStateProcess,
            "TfOpRun" => EventType::TfOpRun,
            "EagerExecute" => EventType::EagerExecute,
            "InstantiatedCapturedFunction::Run"
            | "InstantiatedCapturedFunction::RunWithBorrowedArgs"
            | "InstantiatedCapturedFunction::RunInstantiated"
            | "InstantiatedCapturedFunction::RunAsync" => EventType::CapturedFunctionRun,
            "IteratorGetNextOp::DoCompute" => EventType::IteratorGetNext,
            "IteratorGetNextAsOptionalOp::DoCompute" => EventType::IteratorGetNextAsOptional,
            "Iterator" => EventType::Iterator,
            "Iterator::Prefetch::Generator" => EventType::SecondIterator,
            "ProcessBatch" => EventType::ProcessBatch,
            "OrbaxServing::ProcessBatch" => EventType::OrbaxProcessBatch,
            "BatchingSessionRun" => EventType::BatchingSessionRun,
            "KernelLaunch" => EventType::KernelLaunch,
            "KernelExecute" => EventType::KernelExecute,
            _ => match HOST_EVENT_TYPES.iter().position(|n| *n == name) {
                Some(i) => EventType::Other(u8::try_from(i).unwrap_or(u8::MAX)),
                None => match tf_op_category(name) {
                    OpCategory::TensorFlow => EventType::TfOpRun,
                    OpCategory::TfData => EventType::Iterator,
                    OpCategory::Other => return None,
                },
            },
        };
        Some(known)
    }

    /// TSL's `IsImplicitRootEvent` as far as the type goes (a TPU step also is one).
    pub(crate) fn is_implicit_root(self) -> bool {
        matches!(
            self,
            EventType::FunctionRun
                | EventType::SessionRun
                | EventType::RunGraph
                | EventType::ExecutorStateProcess
        )
    }
}

/// The category TSL's `ParseTfOpFullname` gives a name, as far as event types go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpCategory {
    TensorFlow,
    TfData,
    Other,
}

/// TSL's `ParseTfOpFullname`, category only.
pub(crate) fn tf_op_category(name: &str) -> OpCategory {
    if name.split_once(':').is_some_and(|(n, _)| n == "Iterator") {
        return OpCategory::TfData;
    }
    if is_tf_op(name) {
        OpCategory::TensorFlow
    } else {
        OpCategory::Other
    }
}

/// TSL's `DeriveOpType`: the last name scope without a numeric `_N` suffix.
fn derive_op_type(op_name: &str) -> &str {
    let last = op_name.rsplit('/').next().unwrap_or(op_name);
    match last.rsplit_once('_') {
        Some((head, suffix)) if is_integer(suffix) => head,
        _ => last,
    }
}

/// `absl::SimpleAtoi` into an `int64_t` succeeds (an optional sign, digits, surrounding
/// whitespace allowed).
fn is_integer(s: &str) -> bool {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && t.parse::<i64>().is_ok()
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
        return !is_jax_type(derive_op_type(op_name));
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
        assert!(!is_tf_op("jit_f/add_1:"));
        assert!(is_tf_op("model/MatMul_1:"));
        assert!(is_tf_op("x/_1:"));
        assert_eq!(tf_op_category("Iterator::Prefetch"), OpCategory::TfData);
        assert_eq!(
            EventType::of_name("dense/MatMul:MatMul"),
            Some(EventType::TfOpRun)
        );
        assert_eq!(
            EventType::of_name("Iterator::Map"),
            Some(EventType::Iterator)
        );
        assert_eq!(EventType::of_name("python"), None);
    }
}
