/* commands.c — the table of attn's commands (commands.h): `attn --help`,
 * `attn help CMD`, `attn CMD --list-options`, the dispatch in main.c and
 * the tour all read it. */
#include "commands.h"

#include <string.h>

#include "i18n.h"

/* The tour, given the table's lookup to run the other commands. */
static int cmd_tour(int argc, char **argv)
{
    return tour_main(argc, argv, command_find);
}

/* cells, given the lookup to run `multihead --describe` and the figures. */
static int cmd_cells(int argc, char **argv)
{
    return cells_main(argc, argv, command_find);
}

const struct command attn_commands[] = {
    {"heatmap", cmd_heatmap, usage_heatmap,
     N_("d2l's show_heatmaps for any matrices: a JSON tensor, --path, --eye N"), heatmap_options,
     heatmap_rules},
    {"pool", cmd_pool, usage_pool,
     N_("attention pooling: Nadaraya–Watson regression, average, kernels, learned w"),
     pool_options, pool_rules},
    {"score", cmd_score, usage_score,
     N_("scoring functions: masked softmax, additive and dot-product attention"),
     score_options, score_rules},
    {"selfattn", cmd_selfattn, usage_selfattn,
     N_("self-attention on one sequence (queries = keys = values = X)"), selfattn_options,
     selfattn_rules},
    {"multihead", cmd_multihead, usage_multihead,
     N_("multi-head attention, d2l's MultiHeadAttention, every step shown"), multihead_options,
     multihead_rules},
    {"posenc", cmd_posenc, usage_posenc,
     N_("sinusoidal positional encoding: the matrix, its figures and checks"), posenc_options,
     posenc_rules},
    {"complexity", cmd_complexity, usage_complexity,
     N_("CNN vs RNN vs self-attention: cost, sequential steps, path length"),
     complexity_options, complexity_rules},
    {"train", cmd_train, usage_train,
     N_("train self-attention on a task and watch its attention form"), train_options,
     train_rules},
    {"translate", cmd_translate, usage_translate,
     N_("translate a sentence with a saved model and show its cross-attention"),
     translate_options, translate_rules},
    {"vit", cmd_vit, usage_vit,
     N_("one image through a saved Vision Transformer: probabilities, <cls> attention"),
     vit_options, vit_rules},
    {"cells", cmd_cells, usage_cells,
     N_("the notebook's printing cells, section by section, as PyTorch prints them"),
     cells_options, cells_rules},
    {"tour", cmd_tour, usage_tour, N_("the chapter in order, every figure written to a folder"),
     tour_options, tour_rules},
};

const size_t attn_ncommands = sizeof attn_commands / sizeof attn_commands[0];

const struct command *command_find(const char *name)
{
    for (size_t i = 0; i < attn_ncommands; i++)
        if (strcmp(attn_commands[i].name, name) == 0)
            return &attn_commands[i];
    return NULL;
}
