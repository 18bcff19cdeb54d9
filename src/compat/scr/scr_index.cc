#include "compat/scr/scr_index.h"

#include <climits>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "compat/common/private_file.h"
#include "scr.h"

namespace cairn_compat {

using nlohmann::json;

namespace {
// An integer that fits an int. json's get<int>() converts whatever number
// it finds: a fraction is cut, and a value beyond int's range (2e73, found
// by fuzz_scr_index) is undefined behaviour.
int IntOf(const json& value) {
  if (!value.is_number_integer()) throw std::invalid_argument("not an integer: " + value.dump());
  const bool fits = value.is_number_unsigned()
                        ? value.get<uint64_t>() <= static_cast<uint64_t>(INT_MAX)
                        : value.get<int64_t>() >= INT_MIN && value.get<int64_t>() <= INT_MAX;
  if (!fits) throw std::out_of_range(value.dump() + " is beyond the range of an int");
  return static_cast<int>(value.get<int64_t>());
}
}  // namespace

std::string ScrIndex::ToJson() const {
  json datasets = json::object();
  for (const auto& [id, d] : datasets_) {
    datasets[std::to_string(id)] = {{"name", d.name},       {"flags", d.flags},
                                    {"failed", d.failed},   {"dropped", d.dropped},
                                    {"files", d.files},     {"bypass", d.bypass}};
  }
  json root = {{"format", 1}, {"datasets", datasets}};
  root["current"] = current_ ? json(*current_) : json(nullptr);
  return root.dump(1) + "\n";
}

Status ScrIndex::FromJson(const std::string& text, const std::string& origin) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Status::Error(origin + ": not a JSON object");
  // The library reads what it wrote; a key of the wrong type names itself.
  std::string where;
  try {
    std::map<int, ScrDataset> datasets;
    where = "/format";
    if (IntOf(root.at("format")) != 1) return Status::Error(origin + ": unknown format");
    for (const auto& [key, d] : root.at("datasets").items()) {
      where = "/datasets/" + key;
      size_t used = 0;
      int id = std::stoi(key, &used);
      if (used != key.size() || id < 0) return Status::Error(origin + where + ": not a dataset id");
      datasets[id] = ScrDataset{d.at("name").get<std::string>(), IntOf(d.at("flags")),
                                d.at("failed").get<bool>(), d.at("dropped").get<bool>(),
                                d.at("files").get<std::vector<std::string>>(),
                                d.contains("bypass") && d.at("bypass").get<bool>()};
    }
    where = "/current";
    const json& current = root.at("current");
    std::optional<int> current_id;
    if (!current.is_null()) current_id = IntOf(current);
    // SCR_Current names a dataset the index holds; another id would send
    // the next restart to a dataset nobody recorded.
    if (current_id && datasets.count(*current_id) == 0) {
      return Status::Error(origin + where + ": dataset " + std::to_string(*current_id) +
                           " is not in the index");
    }
    current_ = current_id;
    datasets_ = std::move(datasets);
  } catch (const std::exception& e) {
    return Status::Error(origin + where + ": " + e.what());
  }
  return Status();
}

Status ScrIndex::Load() {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::string text;
  Status st;
  if (rank == 0) {
    auto read = ReadWholeFile(path_);
    if (!read.ok()) st = read.status();
    else if (*read) text = **read;
  }
  // Rank 0's text (or its error) reaches every rank.
  std::string message = st.ok() ? "" : st.message();
  BroadcastString(&text, comm_);
  BroadcastString(&message, comm_);
  if (!message.empty()) return Status::Error(message);
  if (text.empty()) return Status();
  return FromJson(text, path_);
}

Status ScrIndex::Save() const {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  Status st = rank == 0 ? ReplaceFile(path_, ToJson()) : Status();
  int failed = st.ok() ? 0 : 1;
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm_);
  if (failed && rank != 0) return Status::Error("rank 0 could not write the SCR index " + path_);
  return st;
}

Status ScrIndex::Add(int id, ScrDataset dataset) {
  datasets_[id] = std::move(dataset);
  return Save();
}

Status ScrIndex::MarkFailed(int id) {
  datasets_[id].failed = true;
  return Save();
}

Status ScrIndex::Drop(int id) {
  datasets_[id].dropped = true;
  if (current_ == id) current_.reset();
  return Save();
}

Status ScrIndex::SetCurrent(int id) {
  for (auto& [other, d] : datasets_) {
    if (other > id && (d.flags & SCR_FLAG_CHECKPOINT)) d.dropped = true;
  }
  current_ = id;
  return Save();
}

Status ScrIndex::ClearCurrent() {
  if (!current_) return Status();
  current_.reset();
  return Save();
}

std::optional<int> ScrIndex::Find(const std::string& name) const {
  for (auto it = datasets_.rbegin(); it != datasets_.rend(); ++it) {
    if (it->second.name == name && !it->second.dropped) return it->first;
  }
  return std::nullopt;
}

bool ScrIndex::Usable(int id) const {
  auto it = datasets_.find(id);
  return it == datasets_.end() || (!it->second.failed && !it->second.dropped);
}

void BroadcastString(std::string* text, MPI_Comm comm) {
  long length = static_cast<long>(text->size());
  MPI_Bcast(&length, 1, MPI_LONG, 0, comm);
  text->resize(static_cast<size_t>(length));
  MPI_Bcast(text->data(), static_cast<int>(length), MPI_CHAR, 0, comm);
}

Result<std::vector<std::string>> GatherStrings(const std::vector<std::string>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // NUL-separated: paths hold no NUL.
  std::string packed;
  for (const auto& s : mine) packed += s + '\0';
  int length = static_cast<int>(packed.size());
  std::vector<int> lengths(size), offsets(size);
  if (MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm) != MPI_SUCCESS) {
    return Status::Error("MPI_Gather of the file list lengths failed");
  }
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(rank == 0 ? total : 0, '\0');
  if (MPI_Gatherv(packed.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                  MPI_CHAR, 0, comm) != MPI_SUCCESS) {
    return Status::Error("MPI_Gatherv of the file lists failed");
  }
  std::vector<std::string> out;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\0', start);
    out.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace cairn_compat
