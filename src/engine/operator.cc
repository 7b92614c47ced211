#include "sluice/engine/operator.h"

#include <chrono>

#include "sluice/core/error_classes.h"

namespace sluice::engine {
namespace {

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

OperatorChain::OperatorChain(std::vector<std::unique_ptr<Operator>> operators) : operators_(std::move(operators)) {
  for (const auto& op : operators_) progress_.push_back(OperatorProgress{std::string(op->name())});
}

bool OperatorChain::aggregates() const {
  for (const auto& op : operators_) {
    if (op->aggregates()) return true;
  }
  return false;
}

bool OperatorChain::keeps_state() const {
  for (const auto& op : operators_) {
    if (op->keeps_state()) return true;
  }
  return false;
}

std::vector<StatefulOperator*> OperatorChain::stateful() const {
  std::vector<StatefulOperator*> found;
  for (const auto& op : operators_) {
    if (StatefulOperator* state = op->state()) found.push_back(state);
  }
  return found;
}

Result<TypePtr> OperatorChain::Bind(const TypePtr& input) {
  TypePtr schema = input;
  for (const auto& op : operators_) {
    SLUICE_ASSIGN_OR_RETURN(schema, op->Bind(schema));
  }
  input_schema_ = input;
  output_schema_ = schema;
  return schema;
}

Status OperatorChain::BeginBatch(const BatchStart& batch) {
  batch_ = batch;
  for (size_t i = 0; i < operators_.size(); ++i) {
    progress_[i] = OperatorProgress{std::string(operators_[i]->name())};
    SLUICE_RETURN_IF_ERROR(operators_[i]->BeginBatch(batch));
  }
  return Status::OK();
}

Status OperatorChain::PushFrom(size_t first, BatchPtr piece, const Emit& emit) {
  for (size_t i = first; i < operators_.size(); ++i) {
    OperatorProgress& figures = progress_[i];
    figures.num_input_rows += piece->num_rows();
    const int64_t started = SteadyMicros();
    Result<BatchPtr> out = operators_[i]->Push(batch_, piece);
    figures.duration_micros += SteadyMicros() - started;
    if (!out.ok()) return out.status();
    piece = std::move(out).value();
    if (piece == nullptr) {
      return Status::Error(errors::kInternalError, "operator " + figures.name + " gave no batch for a piece");
    }
    figures.num_output_rows += piece->num_rows();
    if (piece->num_rows() == 0) return Status::OK();
  }
  if (piece->num_rows() == 0) return Status::OK();
  return emit(std::move(piece));
}

Status OperatorChain::Push(BatchPtr piece, const Emit& emit) {
  if (input_schema_ != nullptr && !piece->schema()->Equals(*input_schema_)) {
    if (keeps_state()) {
      return Status::Error(errors::kInvalidSchema,
                           "the source's rows changed schema within a batch, from " + input_schema_->ToString() +
                               " to " + piece->schema()->ToString() +
                               "; a query that keeps state is bound to one schema: restart it to bind to the new one");
    }
    SLUICE_RETURN_IF_ERROR(Bind(piece->schema()).status());
  }
  return PushFrom(0, std::move(piece), emit);
}

Status OperatorChain::Finish(const Emit& emit) {
  for (size_t i = 0; i < operators_.size(); ++i) {
    OperatorProgress& figures = progress_[i];
    const int64_t started = SteadyMicros();
    Result<BatchPtr> out = operators_[i]->Finish(batch_);
    figures.duration_micros += SteadyMicros() - started;
    if (!out.ok()) return out.status();
    if (*out == nullptr) continue;
    figures.num_output_rows += (*out)->num_rows();
    if ((*out)->num_rows() > 0) SLUICE_RETURN_IF_ERROR(PushFrom(i + 1, std::move(out).value(), emit));
  }
  return Status::OK();
}

Result<ChainOutput> RunChainOnce(OperatorChain& chain, const TypePtr& schema, const std::vector<BatchPtr>& batches,
                                 int64_t timestamp_micros) {
  ChainOutput output;
  SLUICE_ASSIGN_OR_RETURN(output.schema, chain.Bind(schema));
  SLUICE_RETURN_IF_ERROR(chain.BeginBatch(BatchStart{0, timestamp_micros}));
  const OperatorChain::Emit collect = [&output](BatchPtr rows) {
    output.batches.push_back(std::move(rows));
    return Status::OK();
  };
  for (const BatchPtr& batch : batches) SLUICE_RETURN_IF_ERROR(chain.Push(batch, collect));
  SLUICE_RETURN_IF_ERROR(chain.Finish(collect));
  return output;
}

}  // namespace sluice::engine
