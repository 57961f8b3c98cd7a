// `privsearch client-files`: the directory a client searches from, copied out of an index.
#include "index/artifacts/client_files.h"

#include <fmt/format.h>

#include "commands/command.h"
#include "index/artifacts/artifact_names.h"
#include "index/artifacts/doc_ids.h"
#include "index/artifacts/record_digests.h"
#include "index/candidates/ivf.h"
#include "scoring/layout.h"
#include "version/index_version.h"

namespace privsearch::tools {

Command add_client_files_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand(
      "client-files",
      "Copy what a client needs from an index directory (manifest, signature, projection, "
      "encoder and the candidate index), each artifact verified first; never the exact store, the "
      "IVF lists or the scoring matrix");
  struct Args {
    std::filesystem::path index, out;
    std::string candidates = "auto";
    bool payloads = false, access_private = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--index", a->index, "Index directory (the provider's)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out", a->out, "Client directory to write (created)")->required();
  cmd->add_option("--candidate-index", a->candidates,
                  "flat (pq.bin, ~100 bytes per document), ivf (ivf.bin: centroids and list "
                  "directory; lists are fetched on demand), or auto = ivf when the index has "
                  "it (default auto)")
      ->check(CLI::IsMember({"auto", "flat", "ivf"}));
  cmd->add_flag("--payloads", a->payloads,
                "Also the payload store (titles shown locally; large: record bytes x N)");
  cmd->add_flag("--access-private", a->access_private,
                "Also the access-private layout and hint (downloaded once per index version)");
  return {cmd, [a] {
            // The files are hashed as they are copied (index::copy_client_files).
            const auto v = version::IndexVersion::open(a->index, version::tool_spec());
            if (!v.ok()) return fail(v.status(), "client-files");
            const auto& manifest = v->manifest();
            const bool has_ivf = manifest.find(index::kIvfArtifact) != nullptr;
            const bool ivf = a->candidates == "ivf" || (a->candidates == "auto" && has_ivf);
            std::vector<std::string> names{index::kProjectionArtifact,
                                           ivf ? index::kIvfArtifact : index::kPqArtifact};
            if (manifest.find(index::kEncoderArtifact) != nullptr)
              names.emplace_back(index::kEncoderArtifact);
            // What a private fetch checks each record against (16 bytes a document).
            if (manifest.find(index::kPayloadDigestsArtifact) != nullptr)
              names.emplace_back(index::kPayloadDigestsArtifact);
            // The documents' ids, which name every hit (a few bytes a document).
            if (manifest.find(index::kDocIdsArtifact) != nullptr)
              names.emplace_back(index::kDocIdsArtifact);
            if (a->payloads) names.emplace_back(index::kPayloadsArtifact);
            if (a->access_private) {
              names.emplace_back(scoring::kLayoutArtifact);
              names.emplace_back(scoring::kHintArtifact);
            }
            auto written = index::copy_client_files(a->index, a->out, names);
            if (!written.ok()) return fail(written.status(), "client-files");
            fmt::print("{}: {} bytes ({}), version {}\n", a->out.string(), *written,
                       fmt::join(names, ", "), v->version_id().substr(0, 16));
            return 0;
          }};
}

}  // namespace privsearch::tools
