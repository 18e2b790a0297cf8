//! HolisticTraceAnalysis's analyses (to come).
