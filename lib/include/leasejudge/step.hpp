// Steps: the record a build module keeps of each tool run on a node, under the key
// `<node>.<id>`, and the rules that say which running step no live process runs any
// more. One header for the three parts: the keys (step_key.hpp), the codec that reads
// and ends a step as Go decodes it (step_codec.hpp), and the staleness rules
// (step_rules.hpp).
#pragma once

#include "leasejudge/step_codec.hpp"
#include "leasejudge/step_key.hpp"
#include "leasejudge/step_rules.hpp"
